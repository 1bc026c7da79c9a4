"""Judge configurations, runs, per-seed predictions, final (majority-vote) predictions, history.

One module per group of tables: `runs` (configurations, runs, plans, chunks, scheduling,
calibration, history), `results` (predictions, finals, shortlists), `items` (item vectors, item
text parts), `alignment` (the stored alignment snapshots). Import them from here.
"""

from apps.judges.models.alignment import AlignmentSnapshot
from apps.judges.models.items import ItemTextChoice, ItemVector
from apps.judges.models.results import JudgeFinal, JudgePrediction, JudgeShortlist, PanelShortlist
from apps.judges.models.runs import (
    LOCAL_LABEL,
    SIGNAL_CHOICES,
    JudgeCalibration,
    JudgeConfig,
    JudgeHistory,
    JudgeRun,
    JudgeRunChunk,
    JudgeRunPlan,
    JudgeScheduleRequest,
)

__all__ = [
    "LOCAL_LABEL",
    "SIGNAL_CHOICES",
    "AlignmentSnapshot",
    "ItemTextChoice",
    "ItemVector",
    "JudgeCalibration",
    "JudgeConfig",
    "JudgeFinal",
    "JudgeHistory",
    "JudgePrediction",
    "JudgeRun",
    "JudgeRunChunk",
    "JudgeRunPlan",
    "JudgeScheduleRequest",
    "JudgeShortlist",
    "PanelShortlist",
]
