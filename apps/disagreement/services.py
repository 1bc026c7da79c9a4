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
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from typing import Any

import pandas as pd
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.core.errors import ApplicationError, FieldError, NotFound, PermissionDenied
from apps.disagreement.models import Level, MetricSlice, MetricSnapshot, scope_key

logger = logging.getLogger(__name__)

# Seconds between the first rating change of a burst and the recompute that reads the burst.
DEBOUNCE_SECONDS: int = getattr(settings, "METRICS_DEBOUNCE_SECONDS", 10)
# A queued recompute no worker has taken after this long has lost its message.
QUEUED_TIMEOUT = dt.timedelta(minutes=15)
# Finished snapshots kept per scope (older ones are deleted after each recompute).
KEEP_SNAPSHOTS = 20
# Sections split out of `result` into MetricSlice rows, and the keys they are split by.
SLICED_SECTIONS = (MetricSlice.Kind.STRICTNESS, MetricSlice.Kind.PAIRWISE, MetricSlice.Kind.BOARD)

AUTO_SCOPE = scope_key(level=Level.ORDINAL)


def _enqueue(snapshot_id: int, *, countdown: int) -> None:
    """Send the task; if the broker is unreachable, mark the snapshot failed and say so.

    No synchronous fallback: computing in the web request would hide a dead queue.
    """
    from apps.disagreement.tasks import metrics_recompute_task

    try:
        metrics_recompute_task.apply_async(args=[snapshot_id], countdown=countdown)
    except Exception as exc:  # kombu raises several types for an unreachable broker
        logger.exception("could not enqueue metrics recompute %s", snapshot_id)
        MetricSnapshot.objects.filter(id=snapshot_id, status=MetricSnapshot.Status.QUEUED).update(
            status=MetricSnapshot.Status.FAILED,
            error="The task queue is unreachable, nothing was computed "
            f"({exc.__class__.__name__}).",
        )
        raise ApplicationError(
            "The task queue is unreachable; the metrics were not recomputed. Try again later."
        ) from exc


def metrics_resend_lost() -> list[int]:
    """Beat job: queued recomputes whose message was lost (a Redis restart) are sent again."""
    from apps.core.resend import resend_overdue
    from apps.disagreement.tasks import metrics_recompute_task

    return resend_overdue(
        MetricSnapshot,
        countdown_seconds=DEBOUNCE_SECONDS,
        send=lambda pk: metrics_recompute_task.apply_async(args=[pk]),
    )


def _expire_lost(scope: str) -> None:
    """A QUEUED row whose message was lost would block its scope for good: fail it."""
    MetricSnapshot.objects.filter(
        scope=scope,
        status=MetricSnapshot.Status.QUEUED,
        created_at__lt=timezone.now() - QUEUED_TIMEOUT,
    ).update(status=MetricSnapshot.Status.FAILED, error="No worker picked this recompute up.")


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
    existing = MetricSnapshot.objects.filter(
        scope=scope, status=MetricSnapshot.Status.QUEUED
    ).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            snapshot = MetricSnapshot.objects.create(
                scope=scope,
                level=level,
                since=since,
                until=until,
                include_categories=include_categories,
                requested_by=requested_by,
            )
        return snapshot, True
    except IntegrityError:
        # Another process queued it between our SELECT and INSERT: that one will do.
        return MetricSnapshot.objects.get(scope=scope, status=MetricSnapshot.Status.QUEUED), False


def metrics_mark_stale() -> None:
    """Ratings changed (called after their commit): make sure a recompute will read them.

    Debounced (see the module docstring): a burst of changes costs one SELECT each and produces
    one queued recompute. A dead broker is logged and recorded on the snapshot (the dashboard shows
    it) but not raised: the rating that triggered this is already saved, and raising here would
    also stop the judges' own after-commit hook.
    """
    existing = MetricSnapshot.objects.filter(
        scope=AUTO_SCOPE,
        status=MetricSnapshot.Status.QUEUED,
        created_at__gte=timezone.now() - QUEUED_TIMEOUT,
    ).exists()
    if existing:
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
    """Compute and store one queued snapshot.

    Idempotent: the row is claimed with `filter(status=QUEUED).update(status=RUNNING) == 1`, so a
    redelivered or duplicate message finds nothing to claim and returns the snapshot untouched.
    The ratings are read after the claim, so every change committed before it is included.
    """
    from apps.disagreement.analysis import compute_metrics
    from apps.disagreement.analysis.board import idea_board
    from apps.disagreement.analysis.categories import analysis_scores
    from apps.disagreement.selectors import (
        idea_catalog,
        prediction_frame,
        rating_frame,
        rubric_categories,
        rubric_scales,
    )

    claimed = MetricSnapshot.objects.filter(
        id=snapshot_id, status=MetricSnapshot.Status.QUEUED
    ).update(status=MetricSnapshot.Status.RUNNING, started_at=timezone.now(), progress=5)
    snapshot = MetricSnapshot.objects.filter(id=snapshot_id).first()
    if snapshot is None:
        raise NotFound(f"Metric snapshot {snapshot_id} does not exist.")
    if claimed != 1:
        logger.info("metrics snapshot %s already %s; nothing to do", snapshot_id, snapshot.status)
        return snapshot

    started = time.perf_counter()
    try:
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
        _set_progress(snapshot_id, 70)
        given, analysed = analysis_scores(frame, categories=categories, include_categories=include)
        present = set(frame["dimension"].astype(str))
        result["board"] = idea_board(
            frame,
            given=given,
            score=analysed,
            predictions=prediction_frame(),
            catalog=idea_catalog(),
            dims=[d for d in scales if d in present],
            categories=categories,
            include_categories=include,
        )
        _set_progress(snapshot_id, 85)
        summary, slices = _split(result)
        latest = frame["rated_at"].max() if len(frame) else None
        with transaction.atomic():
            _store_slices(snapshot_id, slices)
            MetricSnapshot.objects.filter(id=snapshot_id).update(
                status=MetricSnapshot.Status.DONE,
                progress=100,
                result=summary,
                n_ratings=len(frame),
                latest_rating_at=None
                if latest is None or pd.isna(latest)
                else latest.round("us").to_pydatetime(),
                computed_at=timezone.now(),
                duration_ms=int((time.perf_counter() - started) * 1000),
                error="",
            )
    except Exception as exc:
        logger.exception("metrics snapshot %s failed", snapshot_id)
        MetricSnapshot.objects.filter(id=snapshot_id).update(
            status=MetricSnapshot.Status.FAILED,
            error=f"{exc.__class__.__name__}: {exc}"[:2000],
            duration_ms=int((time.perf_counter() - started) * 1000),
        )
    _prune(snapshot.scope)
    snapshot.refresh_from_db()
    return snapshot


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


def _prune(scope: str) -> None:
    """Keep the newest KEEP_SNAPSHOTS finished snapshots of a scope."""
    old = list(
        MetricSnapshot.objects.filter(
            scope=scope, status__in=[MetricSnapshot.Status.DONE, MetricSnapshot.Status.FAILED]
        )
        .order_by("-created_at", "-id")
        .values_list("id", flat=True)[KEEP_SNAPSHOTS:]
    )
    if old:
        MetricSnapshot.objects.filter(id__in=old).delete()
