"""Queued snapshots whose task message was lost are sent again (one home for the rule).

A snapshot (disagreement metrics, judge alignment) is a QUEUED row plus one Celery message sent
with a short countdown. The worker holds a countdown message in memory until it is due; when Redis
restarts meanwhile (or the worker dies), the message is gone and the row would wait until its
15-minute expiry. The beat jobs call `resend_overdue` every SNAPSHOT_RESEND_SECONDS: a row still
QUEUED that long after its message was due is sent again. A duplicate message is harmless (the
task claims the row QUEUED -> RUNNING once), and the cache marker keeps one row from being sent on
every pass while it legitimately waits behind other work.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db.models import Model
from django.utils import timezone

logger = logging.getLogger(__name__)


def resend_after() -> dt.timedelta:
    return dt.timedelta(seconds=float(settings.SNAPSHOT_RESEND_SECONDS))


def resend_overdue(
    model: type[Model], *, countdown_seconds: float, send: Callable[[int], None]
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
