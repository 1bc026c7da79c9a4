"""The snapshot-and-debounce pattern, for a model with scope / status / created_at fields.

A stored snapshot is computed by a Celery task, never in a GET. A burst of changes becomes one
recompute: the scope's waiting recompute is the single row in status QUEUED (a partial unique
constraint allows one per scope); a change that finds it does nothing more, since the row reads
the data only when a worker claims it (QUEUED -> RUNNING, a conditional update, so a duplicate
message does nothing). A QUEUED row no worker took within ``lost_after`` is failed, so a lost
message cannot block its scope for good.

The decisions app uses these helpers; the metrics and alignment snapshots carry their own copies
of the same steps (apps/disagreement/services.py, apps/judges/services/alignment.py) and can move
onto this module.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, TypeVar

from django.db import IntegrityError, models, transaction
from django.utils import timezone

M = TypeVar("M", bound=models.Model)

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"


def snapshot_expire_lost(model: type[M], *, scope: str, lost_after: dt.timedelta) -> None:
    model._default_manager.filter(
        scope=scope, status=QUEUED, created_at__lt=timezone.now() - lost_after
    ).update(status=FAILED, error="No worker picked this recompute up.")


def snapshot_queue(model: type[M], *, scope: str, **fields: Any) -> tuple[M, bool]:
    """The scope's QUEUED row, created if missing; returns (row, created)."""
    existing = model._default_manager.filter(scope=scope, status=QUEUED).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            return model._default_manager.create(scope=scope, **fields), True
    except IntegrityError:
        # Another process queued it between our SELECT and INSERT: that one will do.
        return model._default_manager.get(scope=scope, status=QUEUED), False


def snapshot_claim(model: type[M], *, snapshot_id: int) -> bool:
    """QUEUED -> RUNNING; True for the one caller that claimed it."""
    return (
        model._default_manager.filter(id=snapshot_id, status=QUEUED).update(
            status=RUNNING, started_at=timezone.now(), progress=5
        )
        == 1
    )


def snapshot_prune(model: type[M], *, scope: str, keep: int) -> None:
    """Keep the newest ``keep`` finished rows of a scope."""
    old = list(
        model._default_manager.filter(scope=scope, status__in=[DONE, FAILED])
        .order_by("-created_at", "-id")
        .values_list("id", flat=True)[keep:]
    )
    if old:
        model._default_manager.filter(id__in=old).delete()
