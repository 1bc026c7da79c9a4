"""One home for the stored-snapshot pattern: queue, debounce, claim, compute, prune.

Heavy results (the disagreement metrics, the judge alignment) are computed by a Celery task into
a snapshot row and pages read the newest finished one. The rules, the same for every kind:

- a scope's waiting computation is one row in status ``queued``; a partial unique constraint on
  (scope) where status is queued allows at most one. A change that finds it does nothing more:
  the computation reads its inputs only when it starts, so it will see the change;
- otherwise ``queue`` creates the row (a concurrent INSERT losing the race joins the winner's)
  and the caller sends one task, with a countdown so the rest of a burst lands in the same
  computation (the debounce). ``send_or_fail`` marks the row failed when the broker is down:
  nothing is ever computed in a web request instead;
- ``resend_overdue`` (a beat job per app) sends a queued row again when its message is overdue
  by SNAPSHOT_RESEND_SECONDS: the worker holds a countdown message in memory until it is due, so
  a Redis restart or a dead worker loses it. A duplicate message is harmless (the claim below),
  and a cache marker keeps one row from being sent on every pass while it waits behind work;
- ``expire_lost`` fails a queued row whose message was lost for good (minutes), so it cannot
  block its scope;
- ``compute_claimed`` claims the row with the conditional update queued -> running (exactly one
  row), so a redelivered or duplicate message does nothing; from then on a change finds no
  queued row and queues the next computation. No change is ever left unread. A computation
  that raises marks the row failed with the error; ``prune`` keeps the newest finished rows.

A snapshot model is a ``apps.core.models.Snapshot`` (``status``, ``created_at``, ``started_at``,
``computed_at``, ``duration_ms``, ``error``) with its own ``scope`` and the constraint
``one_queued_per_scope``. Each kind declares itself once as a ``SnapshotKind`` (the model, the
name of the task that computes one, how long to debounce, how many to keep); that object
queues, debounces, sends the task by name (no services -> tasks import, so no cycle), resends
lost messages and prunes. What is computed, which scopes exist and when to queue stay with each
app (apps/disagreement/services.py, apps/findings/services.py, apps/decisions/services.py,
apps/judges/services/alignment.py).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from apps.core.errors import ApplicationError, NotFound

logger = logging.getLogger(__name__)

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"

S = TypeVar("S", bound=models.Model)


def has_fresh_queued(model: type[models.Model], scope: str, *, timeout: dt.timedelta) -> bool:
    """Whether the scope already has a queued computation young enough to be alive (one cheap
    SELECT: what a burst of changes pays per change)."""
    return model._default_manager.filter(
        scope=scope, status=QUEUED, created_at__gte=timezone.now() - timeout
    ).exists()


def expire_lost(
    model: type[models.Model], scope: str, *, timeout: dt.timedelta, error: str
) -> None:
    """A queued row older than ``timeout`` has lost its message and would block its scope for
    good: mark it failed with ``error``."""
    model._default_manager.filter(
        scope=scope, status=QUEUED, created_at__lt=timezone.now() - timeout
    ).update(status=FAILED, error=error)


def queue(model: type[S], scope: str, **fields: Any) -> tuple[S, bool]:
    """The scope's queued snapshot, created with ``fields`` if missing: (snapshot, created)."""
    manager = model._default_manager
    existing = manager.filter(scope=scope, status=QUEUED).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            return manager.create(scope=scope, **fields), True
    except IntegrityError:
        # Another process queued it between our SELECT and INSERT: that one will do.
        return manager.get(scope=scope, status=QUEUED), False


def send_or_fail(
    model: type[models.Model],
    snapshot_id: int,
    send: Callable[[], object],
    *,
    error: Callable[[Exception], str],
    log: logging.Logger,
    what: str,
) -> Exception | None:
    """Send the snapshot's task; if the broker is unreachable, mark the still-queued row failed
    with ``error(exc)`` (the page then says nothing will come) and return the exception."""
    try:
        send()
    except Exception as exc:  # kombu raises several types for an unreachable broker
        log.exception("could not enqueue %s %s", what, snapshot_id)
        model._default_manager.filter(id=snapshot_id, status=QUEUED).update(
            status=FAILED, error=error(exc)
        )
        return exc
    return None


def compute_claimed(
    model: type[S],
    snapshot_id: int,
    compute: Callable[[S, Callable[[], int]], None],
    *,
    keep: int,
    log: logging.Logger,
    what: str,
    claim_fields: dict[str, Any] | None = None,
) -> S:
    """Claim one queued snapshot, compute it, prune its scope, return it refreshed.

    Idempotent: the row is claimed with ``filter(status=queued).update(status=running) == 1``, so
    a redelivered or duplicate message finds nothing to claim and gets the row untouched. The
    inputs are read by ``compute(snapshot, elapsed_ms)`` after the claim, so every change
    committed before it is included; ``compute`` stores its result with ``mark_done``. An
    exception marks the row failed with its message (it is not raised: the task has finished).
    """
    manager = model._default_manager
    claimed = manager.filter(id=snapshot_id, status=QUEUED).update(
        status=RUNNING, started_at=timezone.now(), **(claim_fields or {})
    )
    snapshot = manager.filter(id=snapshot_id).first()
    if snapshot is None:
        raise NotFound(f"{what.capitalize()} {snapshot_id} does not exist.")
    if claimed != 1:
        log.info("%s %s already %s; nothing to do", what, snapshot_id, snapshot.status)  # type: ignore[attr-defined]
        return snapshot
    started = time.perf_counter()

    def elapsed_ms() -> int:
        return int((time.perf_counter() - started) * 1000)

    try:
        compute(snapshot, elapsed_ms)
    except Exception as exc:
        log.exception("%s %s failed", what, snapshot_id)
        manager.filter(id=snapshot_id).update(
            status=FAILED, error=f"{exc.__class__.__name__}: {exc}"[:2000], duration_ms=elapsed_ms()
        )
    prune(model, snapshot.scope, keep=keep)  # type: ignore[attr-defined]
    snapshot.refresh_from_db()
    return snapshot


def mark_done(
    model: type[models.Model], snapshot_id: int, elapsed_ms: Callable[[], int], **fields: Any
) -> None:
    """Store a computed snapshot: status done, its result ``fields``, when and how long."""
    model._default_manager.filter(id=snapshot_id).update(
        status=DONE, computed_at=timezone.now(), duration_ms=elapsed_ms(), error="", **fields
    )


def prune(model: type[models.Model], scope: str, *, keep: int) -> None:
    """Keep the newest ``keep`` finished (done or failed) snapshots of a scope."""
    old = list(
        model._default_manager.filter(scope=scope, status__in=[DONE, FAILED])
        .order_by("-created_at", "-id")
        .values_list("id", flat=True)[keep:]
    )
    if old:
        model._default_manager.filter(id__in=old).delete()


def resend_after() -> dt.timedelta:
    return dt.timedelta(seconds=float(settings.SNAPSHOT_RESEND_SECONDS))


def resend_overdue(
    model: type[models.Model], *, countdown_seconds: float, send: Callable[[int], None]
) -> list[int]:
    """Send again the QUEUED rows of `model` overdue by SNAPSHOT_RESEND_SECONDS; their ids."""
    due_before = timezone.now() - dt.timedelta(seconds=countdown_seconds) - resend_after()
    ids = list(
        model._default_manager.filter(status="queued", created_at__lt=due_before)
        .order_by("id")
        .values_list("id", flat=True)[:100]
    )
    sent = []
    for pk in ids:
        marker = f"resend:{model._meta.label_lower}:{pk}"
        if not cache.add(marker, 1, timeout=int(resend_after().total_seconds())):
            continue  # sent on a recent pass; give that message its time
        try:
            send(pk)
        except Exception:  # an unreachable broker: the next pass tries again
            cache.delete(marker)
            logger.exception("could not send %s %s again", model._meta.label_lower, pk)
            continue
        sent.append(pk)
    if sent:
        logger.warning("sent %s %s message(s) again: %s", len(sent), model._meta.label_lower, sent)
    return sent


# A queued row no worker has taken after this long has lost its message for good.
QUEUED_TIMEOUT = dt.timedelta(minutes=15)


def _unreachable(exc: Exception) -> str:
    return f"The task queue is unreachable ({exc.__class__.__name__}); nothing was computed."


@dataclass(frozen=True)
class SnapshotKind(Generic[S]):
    """One kind of stored snapshot, declared once by its app: the rules of this module bound to
    its model and task.

    ``task`` is the name of the Celery task that computes one snapshot (its only argument the
    snapshot id); it is sent by name, so the services never import their tasks. ``debounce``
    names the setting holding the seconds a change waits for the rest of its burst (read when
    sent, so a test or an operator can change it). ``unreachable``, when set, is raised as an
    ApplicationError after a failed send, for the manager who pressed "Recompute now"; the
    automatic path only records the failure on the row. ``queue_name`` "default" sends to the
    default queue instead of the task's route (the judges' routes go to the long-runs queue).
    """

    model: type[S]
    task: str
    what: str
    keep: int
    debounce: str
    debounce_default: float = 10
    unreachable: str | None = None
    lost_error: str = "No worker picked this recompute up."
    queue_name: str | None = None
    timeout: dt.timedelta = QUEUED_TIMEOUT

    def debounce_seconds(self) -> float:
        return float(getattr(settings, self.debounce, self.debounce_default))

    def queue(self, scope: str, **fields: Any) -> tuple[S, bool]:
        """The scope's queued snapshot, created with ``fields`` if missing (a lost one is
        failed first): (snapshot, created)."""
        expire_lost(self.model, scope, timeout=self.timeout, error=self.lost_error)
        return queue(self.model, scope, **fields)

    def _send_task(self, snapshot_id: int, *, countdown: float) -> None:
        queue_name = current_app.conf.task_default_queue if self.queue_name == "default" else None
        current_app.send_task(
            self.task, args=[snapshot_id], countdown=countdown or None, queue=queue_name
        )

    def send(self, snapshot_id: int, *, countdown: float) -> None:
        """Send the computation; a dead broker fails the row loudly (no in-request fallback) and
        raises ``unreachable`` when the kind has one."""
        failure = send_or_fail(
            self.model,
            snapshot_id,
            lambda: self._send_task(snapshot_id, countdown=countdown),
            error=_unreachable,
            log=logger,
            what=self.what,
        )
        if failure is not None and self.unreachable is not None:
            raise ApplicationError(self.unreachable) from failure

    def send_after_commit(self, snapshot_id: int, *, countdown: float) -> None:
        """Send once the caller's transaction commits (at once when there is none)."""
        transaction.on_commit(lambda: self.send(snapshot_id, countdown=countdown))

    def mark_stale(self, scope: str, **fields: Any) -> None:
        """Its inputs changed (called after their commit): make sure a computation will read them.

        A burst costs one SELECT per change (the queued row exists) and produces one computation,
        sent with the debounce. A dead broker is recorded on the row, never raised: the change
        that called this is already saved.
        """
        if has_fresh_queued(self.model, scope, timeout=self.timeout):
            return
        snapshot, created = self.queue(scope, **fields)
        if not created:
            return
        try:
            self.send(snapshot.pk, countdown=self.debounce_seconds())
        except ApplicationError:
            pass  # already logged and recorded on the snapshot

    def request(self, scope: str, **fields: Any) -> S:
        """A manager's "Recompute now": queue (or join) the scope's computation and send it at
        once after commit. Pressing twice returns the same row; the second message is harmless
        (the claim)."""
        snapshot, _ = self.queue(scope, **fields)
        self.send_after_commit(snapshot.pk, countdown=0)
        return snapshot

    def resend_lost(self) -> list[int]:
        """Beat job: queued computations whose message was lost (a Redis restart) are sent
        again."""
        return resend_overdue(
            self.model,
            countdown_seconds=self.debounce_seconds(),
            send=lambda pk: self._send_task(pk, countdown=0),
        )

    def compute(
        self,
        snapshot_id: int,
        compute: Callable[[S, Callable[[], int]], None],
        *,
        claim_fields: dict[str, Any] | None = None,
    ) -> S:
        """Claim, compute, prune (``compute_claimed``); ``compute`` ends with ``done``."""
        return compute_claimed(
            self.model,
            snapshot_id,
            compute,
            keep=self.keep,
            log=logger,
            what=self.what,
            claim_fields=claim_fields,
        )

    def done(self, snapshot_id: int, elapsed_ms: Callable[[], int], **fields: Any) -> None:
        """Store a computed snapshot's result ``fields`` (``mark_done``)."""
        mark_done(self.model, snapshot_id, elapsed_ms, **fields)

    def progress(self, snapshot_id: int, percent: int) -> None:
        """How far a running computation is, for the page that waits on it."""
        self.model._default_manager.filter(id=snapshot_id, status=RUNNING).update(progress=percent)
