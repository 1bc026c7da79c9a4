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
The queue/claim/send/resend/prune mechanics are those of every snapshot kind, declared here as
`METRICS`: apps/core/snapshots.py.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
from django.db import connection, transaction

from apps.accounts.models import User
from apps.core import snapshots
from apps.core.errors import ApplicationError, FieldError, PermissionDenied
from apps.disagreement import analysis
from apps.disagreement.models import Level, MetricSlice, MetricSnapshot, scope_key
from apps.screening.selectors import frame as ratings

logger = logging.getLogger(__name__)

# The metric snapshots (apps/core/snapshots.py): debounced by METRICS_DEBOUNCE_SECONDS (10 s
# unless set), the newest 20 finished kept per scope.
METRICS = snapshots.SnapshotKind(
    MetricSnapshot,
    task="disagreement.metrics_recompute",
    what="metric snapshot",
    keep=20,
    debounce="METRICS_DEBOUNCE_SECONDS",
    debounce_default=10,
    unreachable="The task queue is unreachable; the metrics were not recomputed. Try again later.",
)
# Sections split out of `result` into MetricSlice rows, and the keys they are split by.
# (The decision board moved to apps/decisions, with its own snapshot: Kind.BOARD is no longer
# written.)
SLICED_SECTIONS = (MetricSlice.Kind.STRICTNESS, MetricSlice.Kind.PAIRWISE)

AUTO_SCOPE = scope_key(level=Level.ORDINAL)


def metrics_resend_lost() -> list[int]:
    """Beat job: queued recomputes whose message was lost (a Redis restart) are sent again."""
    return METRICS.resend_lost()


def metrics_mark_stale() -> None:
    """Ratings changed (called after their commit): make sure a recompute will read them.

    Debounced (see the module docstring): a burst of changes costs one SELECT each and produces
    one queued recompute. A dead broker is logged and recorded on the snapshot (the dashboard shows
    it) but not raised: the rating that triggered this is already saved, and raising here would
    also stop the other after-commit hooks.
    """
    METRICS.mark_stale(AUTO_SCOPE, level=Level.ORDINAL, since=None, until=None, requested_by=None)


def metrics_ratings_changed(*, reviewer_ids: Sequence[int]) -> None:
    """A RATINGS_CHANGED_HOOKS hook: every rating is read, so who changed does not matter."""
    metrics_mark_stale()


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
    # Sent after commit of the caller's transaction (immediately when there is none).
    return METRICS.request(
        scope,
        level=level,
        since=since,
        until=until,
        include_categories=include_categories,
        requested_by=actor,
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
    return METRICS.compute(snapshot_id, _compute, claim_fields={"progress": 5})


def _compute(snapshot: MetricSnapshot, elapsed_ms: Callable[[], int]) -> None:
    snapshot_id = snapshot.id
    frame = ratings.rating_frame(since=snapshot.since, until=snapshot.until)
    METRICS.progress(snapshot_id, 30)
    result = analysis.compute_metrics(
        frame,
        scales=ratings.rubric_scales(),
        level=snapshot.level,
        categories=ratings.rubric_categories(),
        include_categories=snapshot.include_categories,
    )
    METRICS.progress(snapshot_id, 85)
    summary, slices = _split(result)
    latest = frame["rated_at"].max() if len(frame) else None
    with transaction.atomic():
        _store_slices(snapshot_id, slices)
        METRICS.done(
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
