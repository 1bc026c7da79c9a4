"""A finished run's finals: the majority vote over each target's kept seeds, upserted; a
prediction run's finals then make the reviewer's shortlists (services.shortlists).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from apps.core.bulk_upsert import bulk_upsert
from apps.judges.engine.panel import level_only
from apps.judges.engine.postprocess import aggregate_seeds
from apps.judges.models import (
    JudgeConfig,
    JudgeFinal,
    JudgePrediction,
    JudgeRun,
)
from apps.judges.services.shortlists import store_shortlist

# What a final is voted from, per per-seed prediction.
_VOTED_FIELDS = (
    "reviewer_id",
    "idea_id",
    "dimension_id",
    "kind",
    "k",
    "config_id",
    "score",
    "confidence",
    "reason",
    "signal",
    "panel_size",
    "level_score",
)


def finalize_run(run: JudgeRun, *, rows: Sequence[Mapping[str, Any]] | None = None) -> None:
    """Majority vote over each target's kept seeds (postprocess.aggregate_seeds); upserted.

    From `rows` when given: every per-seed prediction of the run as it was stored (a run judged
    whole: services.chunks), which is not read back; otherwise from the stored rows."""
    thresholds = dict(
        JudgeConfig.objects.filter(runs=run).values_list("id", "confidence_threshold")
    )
    groups: dict[tuple[int, int, int, str, int], list[tuple]] = defaultdict(list)
    voted: Iterable[tuple]
    if rows is None:
        voted = (
            JudgePrediction.objects.filter(run_id=run.id)
            .order_by("seed")
            .values_list(*_VOTED_FIELDS)
        )
    else:
        voted = map(itemgetter(*_VOTED_FIELDS), sorted(rows, key=itemgetter("seed")))
    for reviewer, idea, dim_id, kind, k, config_id, score, confidence, reason, *more in voted:
        groups[(reviewer, idea, dim_id, kind, k)].append(
            (config_id, score, confidence, reason, *more)
        )
    finals = []
    for (reviewer_id, idea_id, dimension_id, kind, k), preds in groups.items():
        threshold = thresholds.get(preds[0][0], 80)
        final = aggregate_seeds([(p[1], p[2]) for p in preds], threshold=threshold)
        voters = [
            p
            for p in preds
            if p[1] is not None and p[1] == final.score and (p[2] or 0) >= threshold
        ]
        voters.sort(key=lambda p: -(p[2] or 0))
        # The reason shown (case view, reasoning similarity): a kept vote for the final score, or,
        # when every seed was discarded, the most confident scored reply, so the text is not lost.
        scored = sorted((p for p in preds if p[1] is not None), key=lambda p: -(p[2] or 0))
        reason = voters[0][3] if voters else (scored[0][3] if scored else "")
        source = voters[0] if voters else (scored[0] if scored else None)
        levels = [p[6] for p in preds if p[6] is not None]
        finals.append(
            dict(
                run_id=run.id,
                reviewer_id=reviewer_id,
                idea_id=idea_id,
                dimension_id=dimension_id,
                kind=kind,
                k=k,
                score=final.score,
                kept=final.kept,
                discarded=final.discarded,
                failed=final.failed,
                confidence=final.confidence,
                reason=reason,
                signal=source[4] if source else "",
                panel_size=source[5] if source else 0,
                level_score=level_only(levels),
            )
        )
    bulk_upsert(
        JudgeFinal,
        finals,
        expect_new=True,  # a run's finals are voted once; a retried finish upserts them
        unique_fields=["run", "reviewer", "idea", "dimension", "kind", "k"],
        update_fields=[
            "score",
            "kept",
            "discarded",
            "failed",
            "confidence",
            "reason",
            "signal",
            "panel_size",
            "level_score",
        ],
    )
    if run.purpose == JudgeRun.Purpose.PREDICTION:
        store_shortlist(run, [JudgeFinal(**row) for row in finals])
