"""Writes for findings: queue, debounce and run the findings computation into a snapshot.

The debounce is the metric snapshots' (apps/disagreement/services.py): every rating change calls
`findings_mark_stale()` after its commit; at most one QUEUED snapshot exists per scope (a partial
unique constraint), so a burst of changes costs one SELECT each and produces one computation,
sent with a countdown; the task claims the row QUEUED -> RUNNING, and changes after the claim
queue the next one. Only the default threshold is recomputed automatically; other thresholds
are computed when a manager asks.

The queue/claim/send/resend/prune mechanics are those of every snapshot kind, declared here as
`FINDINGS`: apps/core/snapshots.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from django.db import transaction

from apps.accounts.models import User
from apps.core import snapshots
from apps.core.errors import ApplicationError, FieldError, PermissionDenied
from apps.findings.analysis import compute_findings
from apps.findings.models import FindingSlice, FindingSnapshot, Source, scope_key
from apps.findings.selectors import default_threshold, judge_reason_frame, rationale_frame
from apps.judges.backends import embed_texts

logger = logging.getLogger(__name__)

# The findings snapshots (apps/core/snapshots.py): debounced by FINDINGS_DEBOUNCE_SECONDS (30 s
# unless set), the newest 10 finished kept per scope.
FINDINGS = snapshots.SnapshotKind(
    FindingSnapshot,
    task="findings.findings_recompute",
    what="findings snapshot",
    keep=10,
    debounce="FINDINGS_DEBOUNCE_SECONDS",
    debounce_default=30,
    unreachable="The task queue is unreachable; the findings were not recomputed. Try again later.",
)


def findings_resend_lost() -> list[int]:
    """Beat job: queued recomputes whose message was lost (a Redis restart) are sent again."""
    return FINDINGS.resend_lost()


def findings_mark_stale(*, threshold: float | None = None) -> None:
    """Rationales may have changed (called after a rating commit): queue one debounced run, at
    the setting's threshold unless another is named (a restore queues every threshold the
    installation had computed).

    A dead broker is logged and recorded on the snapshot, not raised: the rating is saved.
    """
    threshold = default_threshold() if threshold is None else threshold
    FINDINGS.mark_stale(scope_key(threshold=threshold), threshold=threshold, requested_by=None)


def findings_ratings_changed(*, reviewer_ids: Sequence[int]) -> None:
    """A RATINGS_CHANGED_HOOKS hook: every rationale is read, so who changed does not matter."""
    findings_mark_stale()


def validate_threshold(value: Any) -> float:
    """The one home of the threshold's bounds; raises ApplicationError naming the field."""
    try:
        threshold = float(value)
    except (TypeError, ValueError):
        threshold = float("nan")
    if not 0.05 <= threshold <= 1.0:
        raise ApplicationError(
            "The threshold is not valid.",
            errors=[
                FieldError(
                    field="threshold", message="must be a number from 0.05 to 1", value=str(value)
                )
            ],
        )
    return round(threshold, 3)


def findings_request_recompute(*, actor: User, threshold: Any = None) -> FindingSnapshot:
    """A manager's "Recompute now" (or another threshold): queue or join, send after commit."""
    if not actor.can_read_all_ratings:
        raise PermissionDenied("Only managers and admins recompute findings.")
    value = default_threshold() if threshold in (None, "") else validate_threshold(threshold)
    return FINDINGS.request(scope_key(threshold=value), threshold=value, requested_by=actor)


def findings_compute(
    *,
    threshold: float,
    domain: str | None = None,
    idea_id: int | None = None,
    source: str = Source.REVIEWERS,
) -> dict[str, Any]:
    """Compute in-process (the command's path): the same analysis the task stores."""
    frame = (
        rationale_frame(domain=domain)
        if source == Source.REVIEWERS
        else judge_reason_frame(domain=domain)
    )
    return compute_findings(
        frame,
        embed_texts,
        threshold=threshold,
        ideas=None if idea_id is None else {idea_id},
    )


def findings_recompute(*, snapshot_id: int) -> FindingSnapshot:
    """Compute and store one queued snapshot (claimed once: apps/core/snapshots.py).

    Idempotent: claimed with `filter(status=QUEUED).update(status=RUNNING) == 1`, so a second
    delivery finds nothing to claim. The rationales are read after the claim.
    """
    return FINDINGS.compute(snapshot_id, _compute, claim_fields={"progress": 5})


def _compute(snapshot: FindingSnapshot, elapsed_ms: Callable[[], int]) -> None:
    snapshot_id = snapshot.id
    summary: dict[str, Any] = {}
    slices: list[FindingSlice] = []
    n_rationales = 0
    for source in (Source.REVIEWERS, Source.JUDGES):
        frame = rationale_frame() if source == Source.REVIEWERS else judge_reason_frame()
        if source == Source.REVIEWERS:
            n_rationales = len(frame)
        result = compute_findings(frame, embed_texts, threshold=snapshot.threshold)
        for key, section in result["domains"].items():
            slices.append(FindingSlice(source=source, domain=key, ideas=section.pop("ideas")))
        summary[source] = result
        FINDINGS.progress(snapshot_id, 60)
    with transaction.atomic():
        for row in slices:
            row.snapshot_id = snapshot_id
        FindingSlice.objects.filter(snapshot_id=snapshot_id).delete()
        FindingSlice.objects.bulk_create(slices)
        FINDINGS.done(
            snapshot_id,
            elapsed_ms,
            progress=100,
            result=summary,
            n_rationales=n_rationales,
        )
