"""The periodic reclaim of judge work (Celery beat, every JUDGE_RECLAIM_SECONDS): runs whose
worker died, runs and schedulings whose message was lost, alignment snapshots whose message was
lost. It shares the scheduling's request table and its clock (services.scheduling.db_now).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.core.leases import lease_expired_before
from apps.judges.models import JudgeRun, JudgeScheduleRequest
from apps.judges.services import alignment, dispatch
from apps.judges.services.scheduling import db_now

log = logging.getLogger(__name__)


def judge_runs_reclaim() -> dict[str, int]:
    """The periodic reclaim (Celery beat): resume what a dead worker or a lost message left.

    - running runs whose heartbeat is older than JUDGE_LEASE_SECONDS: their worker died (a
      SIGKILL leaves the message unacked in Redis until its visibility timeout); sent again, they
      resume from the stored plan, skipping stored predictions;
    - queued runs whose message is gone: queued for SNAPSHOT_RESEND_SECONDS while the judges
      queue on the broker is empty (nothing waits there, so their message cannot be waiting its
      turn: Redis lost it in a restart, or a worker dropped it when its connection broke), or
      queued longer than JUDGE_REQUEUE_AFTER_SECONDS whatever the queue holds (the broker could
      not be asked, or new work keeps the queue from ever emptying). Sent again;
    - pending scheduling rows overdue by SNAPSHOT_RESEND_SECONDS (their message was due
      JUDGE_DEBOUNCE_SECONDS after it was sent): their task is sent again. Like the snapshots,
      a reviewer's judge work lost with Redis is sent again within about a minute of the
      restart, not after JUDGE_REQUEUE_AFTER_SECONDS (issue 29: 609 s);
    - queued alignment snapshots overdue by SNAPSHOT_RESEND_SECONDS (snapshots.resend_overdue).
    Each resent row's clock is reset, so a run is not sent again on every pass while it waits in
    the queue. Duplicate deliveries are harmless (the claim and the lease; a duplicate
    scheduling finds its rows claimed and does nothing). Returns counts.
    """
    now = timezone.now()
    requeue_before = now - timedelta(seconds=float(settings.JUDGE_REQUEUE_AFTER_SECONDS))
    resend_after = timedelta(seconds=float(settings.SNAPSHOT_RESEND_SECONDS))
    # Asked before the transaction: a broker call must not hold row locks.
    lost_before = requeue_before
    if dispatch.runs_waiting_in_broker() == 0:
        lost_before = max(requeue_before, now - resend_after)
    schedule_due_before = (
        now - timedelta(seconds=float(settings.JUDGE_DEBOUNCE_SECONDS)) - resend_after
    )
    with transaction.atomic():
        stale = list(
            JudgeRun.objects.select_for_update(skip_locked=True)
            .filter(
                Q(status=JudgeRun.Status.RUNNING)
                & (
                    Q(heartbeat_at__lt=lease_expired_before())
                    | Q(heartbeat_at__isnull=True, updated_at__lt=lease_expired_before())
                )
            )
            .values_list("id", flat=True)
        )
        lost = list(
            JudgeRun.objects.select_for_update(skip_locked=True)
            .filter(status=JudgeRun.Status.QUEUED, updated_at__lt=lost_before)
            .order_by("id")
            .values_list("id", flat=True)
        )
        if stale:
            JudgeRun.objects.filter(id__in=stale).update(heartbeat_at=now, updated_at=now)
        if lost:
            JudgeRun.objects.filter(id__in=lost).update(updated_at=now)
        schedules = list(
            JudgeScheduleRequest.objects.filter(
                status=JudgeScheduleRequest.Status.QUEUED, sent_at__lt=schedule_due_before
            ).values_list("reviewer_id", flat=True)
        )
        if schedules:
            JudgeScheduleRequest.objects.filter(
                reviewer_id__in=schedules, status=JudgeScheduleRequest.Status.QUEUED
            ).update(sent_at=now)
        # A scheduling task killed mid-work leaves its rows RUNNING; they block nothing, but go.
        JudgeScheduleRequest.objects.filter(
            status=JudgeScheduleRequest.Status.RUNNING, created_at__lt=requeue_before
        ).delete()
        send = stale + lost
        transaction.on_commit(lambda: dispatch.send_runs(send))
        if schedules:
            when = db_now()
            transaction.on_commit(
                lambda: dispatch.send_schedule(schedules, countdown=0, changed_at=when)
            )
    if stale or lost or schedules:
        log.warning(
            "judge reclaim: %s runs with a dead worker, %s lost runs, %s lost schedulings sent "
            "again",
            len(stale),
            len(lost),
            len(schedules),
        )
    alignments = alignment.alignment_resend_lost()
    return {
        "stale": len(stale),
        "lost": len(lost),
        "schedules": len(schedules),
        "alignments": len(alignments),
    }
