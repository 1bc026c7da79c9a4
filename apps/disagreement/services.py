"""Writes for the disagreement analytics: queue, debounce and run metric recomputes.

How a burst of rating changes becomes one recompute (the debounce):
- every rating change calls `metrics_mark_stale()` after its commit;
- the scope's waiting recompute is a MetricSnapshot row in status QUEUED, and a partial unique
  constraint allows at most one per scope. If it exists, the change will be read by it (it reads
  the ratings only when it starts), so nothing more is done: one cheap SELECT per change;
- otherwise a QUEUED row is created and one task is sent with a countdown, so the rest of the
  burst lands in the same recompute;
- the task claims the row with a conditional update QUEUED -> RUNNING; from then on a change
  finds no QUEUED row and queues the next recompute. No change is ever left unread.
The queue/claim/prune mechanics are shared with the judge alignment: apps/core/snapshots.py.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable
from typing import Any

import pandas as pd
from django.conf import settings
from django.db import connection, transaction

from apps.accounts.models import User
from apps.core import snapshots
from apps.core.errors import ApplicationError, FieldError, PermissionDenied
from apps.disagreement.models import Level, MetricSlice, MetricSnapshot, scope_key

logger = logging.getLogger(__name__)

# Seconds between the first rating change of a burst and the recompute that reads the burst.
DEBOUNCE_SECONDS: int = getattr(settings, "METRICS_DEBOUNCE_SECONDS", 10)
# A queued recompute no worker has taken after this long has lost its message.
QUEUED_TIMEOUT = dt.timedelta(minutes=15)
# Finished snapshots kept per scope (older ones are deleted after each recompute).
KEEP_SNAPSHOTS = 20
# Sections split out of `result` into MetricSlice rows, and the keys they are split by.
# (The decision board moved to apps/decisions, with its own snapshot: Kind.BOARD is no longer
# written.)
SLICED_SECTIONS = (MetricSlice.Kind.STRICTNESS, MetricSlice.Kind.PAIRWISE)

AUTO_SCOPE = scope_key(level=Level.ORDINAL)


def _enqueue(snapshot_id: int, *, countdown: int) -> None:
    """Send the task; if the broker is unreachable, mark the snapshot failed and say so.

    No synchronous fallback: computing in the web request would hide a dead queue.
    """
    from apps.disagreement.tasks import metrics_recompute_task

    failure = snapshots.send_or_fail(
        MetricSnapshot,
        snapshot_id,
        lambda: metrics_recompute_task.apply_async(args=[snapshot_id], countdown=countdown),
        error=lambda exc: (
            f"The task queue is unreachable, nothing was computed ({exc.__class__.__name__})."
        ),
        log=logger,
        what="metrics recompute",
    )
    if failure is not None:
        raise ApplicationError(
            "The task queue is unreachable; the metrics were not recomputed. Try again later."
        ) from failure


def metrics_resend_lost() -> list[int]:
    """Beat job: queued recomputes whose message was lost (a Redis restart) are sent again."""
    from apps.disagreement.tasks import metrics_recompute_task

    return snapshots.resend_overdue(
        MetricSnapshot,
        countdown_seconds=DEBOUNCE_SECONDS,
        send=lambda pk: metrics_recompute_task.apply_async(args=[pk]),
    )


def _expire_lost(scope: str) -> None:
    """A QUEUED row whose message was lost would block its scope for good: fail it."""
    snapshots.expire_lost(
        MetricSnapshot, scope, timeout=QUEUED_TIMEOUT, error="No worker picked this recompute up."
    )


def _queue(
    *,
    level: str,
    since: dt.date | None,
    until: dt.date | None,
    requested_by: User | None,
    include_categories: bool = False,
) -> tuple[MetricSnapshot, bool]:
    """The scope's QUEUED snapshot, created if missing; returns (snapshot, created)."""
    scope = scope_key(level=level, since=since, until=until, include_categories=include_categories)
    return snapshots.queue(
        MetricSnapshot,
        scope,
        level=level,
        since=since,
        until=until,
        include_categories=include_categories,
        requested_by=requested_by,
    )


def metrics_mark_stale() -> None:
    """Ratings changed (called after their commit): make sure a recompute will read them.

    Debounced (see the module docstring): a burst of changes costs one SELECT each and produces
    one queued recompute. A dead broker is logged and recorded on the snapshot (the dashboard shows
    it) but not raised: the rating that triggered this is already saved, and raising here would
    also stop the judges' own after-commit hook.
    """
    if snapshots.has_fresh_queued(MetricSnapshot, AUTO_SCOPE, timeout=QUEUED_TIMEOUT):
        return
    _expire_lost(AUTO_SCOPE)
    snapshot, created = _queue(level=Level.ORDINAL, since=None, until=None, requested_by=None)
    if not created:
        return
    try:
        _enqueue(snapshot.id, countdown=DEBOUNCE_SECONDS)
    except ApplicationError:
        pass  # already logged and recorded on the snapshot


def metrics_request_recompute(
    *,
    actor: User,
    level: str = Level.ORDINAL,
    since: dt.date | None = None,
    until: dt.date | None = None,
    include_categories: bool = False,
) -> MetricSnapshot:
    """A manager's "Recompute now": queue (or join) the scope's recompute and send it at once.

    Pressing twice returns the same queued snapshot; the second message is harmless because the
    task claims the row. Raises ApplicationError if the broker is unreachable.
    """
    if not actor.can_read_all_ratings:
        raise PermissionDenied("Only managers and admins recompute metrics.")
    errors = []
    if level not in Level.values:
        errors.append(
            FieldError(
                field="level", message=f"must be one of {', '.join(Level.values)}", value=level
            )
        )
    if since and until and since > until:
        errors.append(
            FieldError(field="until", message="must not be before the start date", value=str(until))
        )
    if errors:
        raise ApplicationError("The recompute was not started.", errors=errors)
    scope = scope_key(level=level, since=since, until=until, include_categories=include_categories)
    _expire_lost(scope)
    snapshot, _ = _queue(
        level=level,
        since=since,
        until=until,
        requested_by=actor,
        include_categories=include_categories,
    )
    # Sent after commit of the caller's transaction (immediately when there is none).
    transaction.on_commit(lambda: _enqueue(snapshot.id, countdown=0))
    return snapshot


def _set_progress(snapshot_id: int, progress: int) -> None:
    MetricSnapshot.objects.filter(id=snapshot_id, status=MetricSnapshot.Status.RUNNING).update(
        progress=progress
    )


def _split(result: dict[str, Any]) -> tuple[dict[str, Any], list[MetricSlice]]:
    """Move the big per-reviewer sections out of the summary into per-(domain, dimension) rows."""
    summary = {k: v for k, v in result.items() if k not in SLICED_SECTIONS}
    slices: list[MetricSlice] = []
    for kind in SLICED_SECTIONS:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for row in result.get(kind, []):
            groups.setdefault((row["domain"], row["dimension"]), []).append(row)
        slices += [
            MetricSlice(kind=kind, domain=domain, dimension=dimension, rows=rows)
            for (domain, dimension), rows in groups.items()
        ]
    return summary, slices


def metrics_recompute(*, snapshot_id: int) -> MetricSnapshot:
    """Compute and store one queued snapshot (claimed once: apps/core/snapshots.py).

    Idempotent: a redelivered or duplicate message finds nothing to claim and returns the
    snapshot untouched. The ratings are read after the claim, so every change committed before
    it is included.
    """
    return snapshots.compute_claimed(
        MetricSnapshot,
        snapshot_id,
        _compute,
        keep=KEEP_SNAPSHOTS,
        log=logger,
        what="metric snapshot",
        claim_fields={"progress": 5},
    )


def _compute(snapshot: MetricSnapshot, elapsed_ms: Callable[[], int]) -> None:
    from apps.disagreement.analysis import compute_metrics
    from apps.disagreement.selectors import rating_frame, rubric_categories, rubric_scales

    snapshot_id = snapshot.id
    frame = rating_frame(since=snapshot.since, until=snapshot.until)
    _set_progress(snapshot_id, 30)
    categories = rubric_categories()
    include = snapshot.include_categories
    scales = rubric_scales()
    result = compute_metrics(
        frame,
        scales=scales,
        level=snapshot.level,
        categories=categories,
        include_categories=include,
    )
    _set_progress(snapshot_id, 85)
    summary, slices = _split(result)
    latest = frame["rated_at"].max() if len(frame) else None
    with transaction.atomic():
        _store_slices(snapshot_id, slices)
        snapshots.mark_done(
            MetricSnapshot,
            snapshot_id,
            elapsed_ms,
            progress=100,
            result=summary,
            n_ratings=len(frame),
            latest_rating_at=None
            if latest is None or pd.isna(latest)
            else latest.round("us").to_pydatetime(),
        )


def _store_slices(snapshot_id: int, slices: list[MetricSlice]) -> None:
    """Insert the slices with server-side parameters.

    bulk_create would inline each JSON document into an array literal, escaping it character by
    character on the client: seconds for the ~30 MB of pairwise rows a million ratings produce.
    """
    if not slices:
        return
    if connection.vendor != "postgresql":
        for piece in slices:
            piece.snapshot_id = snapshot_id
        MetricSlice.objects.bulk_create(slices, batch_size=200)
        return
    table = MetricSlice._meta.db_table
    with connection.cursor() as cur:
        cur.executemany(
            f"INSERT INTO {table} (snapshot_id, kind, domain, dimension, rows) "
            "VALUES (%s, %s, %s, %s, %s::jsonb)",
            [(snapshot_id, p.kind, p.domain, p.dimension, json.dumps(p.rows)) for p in slices],
        )
