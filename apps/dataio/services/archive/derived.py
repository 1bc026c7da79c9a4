"""What a restore does not carry but recomputes: the snapshots, the shortlists and the item
text choices (state.py's docstring lists what is derived)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from django.db import transaction

from apps.decisions.services import decisions_mark_stale
from apps.disagreement.services import metrics_mark_stale
from apps.findings.models import FindingSnapshot
from apps.findings.services import findings_mark_stale
from apps.judges.models import JudgeRun
from apps.judges.services import judge_shortlists_rebuild
from apps.judges.services.alignment import alignment_runs_finished
from apps.judges.services.dispatch import send_item_parts_measure


def findings_thresholds() -> list[float]:
    """The thresholds the installation computed findings at (the setting's and any a manager
    asked for), so a restore recomputes every one of them, not the default alone."""
    return sorted(
        set(
            FindingSnapshot.objects.filter(status=FindingSnapshot.Status.DONE).values_list(
                "threshold", flat=True
            )
        )
    )


def snapshots_recompute(*, findings_thresholds: Sequence[float] = ()) -> None:
    """Snapshots are derived: after a restore, queue the metrics, the decision board, the
    findings (at the setting's threshold and every other one the installation had computed)
    and the alignment of every finished run's scope, computed by the worker as after any change;
    the judges' shortlists are stored again from the restored prediction runs, and every
    domain's item text parts are measured again (the choice is derived, not carried)."""
    judge_shortlists_rebuild()
    transaction.on_commit(send_item_parts_measure)
    transaction.on_commit(decisions_mark_stale)
    transaction.on_commit(findings_mark_stale)
    for threshold in findings_thresholds:
        transaction.on_commit(functools.partial(findings_mark_stale, threshold=threshold))
    done = list(JudgeRun.objects.filter(status=JudgeRun.Status.DONE).values_list("id", flat=True))
    alignment_runs_finished(run_ids=done)
    transaction.on_commit(metrics_mark_stale)
