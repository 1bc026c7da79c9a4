"""Writes for findings: queue, debounce and run the findings computation into a snapshot.

The debounce is the metric snapshots' (apps/disagreement/services.py): every rating change calls
`findings_mark_stale()` after its commit; at most one QUEUED snapshot exists per scope (a partial
unique constraint), so a burst of changes costs one SELECT each and produces one computation,
sent with a countdown; the task claims the row QUEUED -> RUNNING, and changes after the claim
queue the next one. Only the default threshold is recomputed automatically; other thresholds
are computed when a manager asks.

The queue/claim/prune mechanics are shared with the metrics, the judge alignment and the
decision board: apps/core/snapshots.py.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.accounts.models import User
from apps.core import snapshots
from apps.core.errors import ApplicationError, FieldError, PermissionDenied
from apps.findings.analysis import compute_findings
from apps.findings.models import FindingSlice, FindingSnapshot, Source, scope_key
from apps.findings.selectors import default_threshold, judge_reason_frame, rationale_frame
from apps.judges.backends import embed_texts

logger = logging.getLogger(__name__)

DEBOUNCE_SECONDS: int = getattr(settings, "FINDINGS_DEBOUNCE_SECONDS", 30)
QUEUED_TIMEOUT = dt.timedelta(minutes=15)
KEEP_SNAPSHOTS = 10


def findings_resend_lost() -> list[int]:
    """Beat job: queued recomputes whose message was lost (a Redis restart) are sent again."""
    from apps.findings.tasks import findings_recompute_task

    return snapshots.resend_overdue(
        FindingSnapshot,
        countdown_seconds=DEBOUNCE_SECONDS,
        send=lambda pk: findings_recompute_task.apply_async(args=[pk]),
    )


def _enqueue(snapshot_id: int, *, countdown: int) -> None:
    """Send the task; an unreachable broker fails the snapshot loudly (no in-request fallback)."""
    from apps.findings.tasks import findings_recompute_task

    failure = snapshots.send_or_fail(
        FindingSnapshot,
        snapshot_id,
        lambda: findings_recompute_task.apply_async(args=[snapshot_id], countdown=countdown),
        error=lambda exc: f"The task queue is unreachable ({exc.__class__.__name__}).",
        log=logger,
        what="findings recompute",
    )
    if failure is not None:
        raise ApplicationError(
            "The task queue is unreachable; the findings were not recomputed. Try again later."
        ) from failure


def _queue(*, threshold: float, requested_by: User | None) -> tuple[FindingSnapshot, bool]:
    """The scope's QUEUED snapshot, created if missing (a lost one is failed first)."""
    scope = scope_key(threshold=threshold)
    snapshots.expire_lost(
        FindingSnapshot, scope, timeout=QUEUED_TIMEOUT, error="No worker picked this recompute up."
    )
    return snapshots.queue(FindingSnapshot, scope, threshold=threshold, requested_by=requested_by)


def findings_mark_stale(*, threshold: float | None = None) -> None:
    """Rationales may have changed (called after a rating commit): queue one debounced run, at
    the setting's threshold unless another is named (a restore queues every threshold the
    installation had computed).

    A dead broker is logged and recorded on the snapshot, not raised: the rating is saved.
    """
    threshold = default_threshold() if threshold is None else threshold
    # The common case of a burst: one SELECT, no write.
    if snapshots.has_fresh_queued(
        FindingSnapshot, scope_key(threshold=threshold), timeout=QUEUED_TIMEOUT
    ):
        return
    snapshot, created = _queue(threshold=threshold, requested_by=None)
    if not created:
        return
    try:
        _enqueue(snapshot.id, countdown=DEBOUNCE_SECONDS)
    except ApplicationError:
        pass


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
    snapshot, _ = _queue(threshold=value, requested_by=actor)
    transaction.on_commit(lambda: _enqueue(snapshot.id, countdown=0))
    return snapshot


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
    return snapshots.compute_claimed(
        FindingSnapshot,
        snapshot_id,
        _compute,
        keep=KEEP_SNAPSHOTS,
        log=logger,
        what="findings snapshot",
        claim_fields={"progress": 5},
    )


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
        FindingSnapshot.objects.filter(id=snapshot_id).update(progress=60)
    with transaction.atomic():
        for row in slices:
            row.snapshot_id = snapshot_id
        FindingSlice.objects.filter(snapshot_id=snapshot_id).delete()
        FindingSlice.objects.bulk_create(slices)
        snapshots.mark_done(
            FindingSnapshot,
            snapshot_id,
            elapsed_ms,
            progress=100,
            result=summary,
            n_rationales=n_rationales,
        )
