"""Thin Celery tasks: ids in, one service call. acks_late and time limits are global settings.

Messages are sent only by apps.judges.services.dispatch, by task name."""

from __future__ import annotations

from datetime import datetime

from celery import Task, shared_task

from apps.catalog.models import Domain
from apps.judges.services import (
    RunDeferred,
    judge_run_execute,
    judge_run_fail,
    judge_runs_reclaim,
    judge_schedule_requests_run,
)
from apps.judges.services.alignment import TASK_NAME as ALIGNMENT_TASK_NAME
from apps.judges.services.alignment import alignment_snapshot_compute
from apps.judges.services.item_parts import item_parts_measure


def _execute(task: Task, run_id: int) -> str:
    try:
        return judge_run_execute(run_id=run_id)
    except RunDeferred as exc:
        # The endpoint is rate-limiting or down (or the time limit hit): the run stays running
        # and the retry resumes it where it stopped.
        if task.request.retries >= task.max_retries:
            judge_run_fail(run_id=run_id, error=f"The judge endpoint kept failing; gave up: {exc}")
            return "failed"
        countdown = 0 if "time limit" in str(exc) else None
        raise task.retry(exc=exc, countdown=countdown) from exc


@shared_task(name="judges.judge_run_execute", bind=True, max_retries=20, default_retry_delay=30)
def judge_run_execute_task(self: Task, run_id: int) -> str:
    """Execute (or resume) one judge run. Safe to run twice: see services.execution."""
    return _execute(self, run_id)


@shared_task(name="judges.judge_run_chunk", bind=True, max_retries=20, default_retry_delay=30)
def judge_run_chunk_task(self: Task, run_id: int, index: int) -> str:
    """Help with a run split into chunks (LLM runs): claims whichever chunks are free."""
    return _execute(self, run_id)


# Sent to the default queue, not "judges" (see services.dispatch.send_schedule).
@shared_task(name="judges.judge_runs_schedule")
def judge_runs_schedule_task(
    reviewer_ids: list[int], countdown: float | None = None, changed_at: str | None = None
) -> dict:
    """Decide and queue the automatic runs for these reviewers. Safe to run twice: a queued run
    for a scope is reused, never duplicated."""
    return judge_schedule_requests_run(
        reviewer_ids=reviewer_ids,
        changed_at=datetime.fromisoformat(changed_at) if changed_at else None,
    )


@shared_task(name="judges.judge_runs_reclaim")
def judge_runs_reclaim_task() -> dict:
    """Periodic (Celery beat): resume runs whose worker died, resend lost messages."""
    return judge_runs_reclaim()


# Sent by name to the default queue (services.alignment._enqueue): seconds, not minutes.
@shared_task(name=ALIGNMENT_TASK_NAME, acks_late=True)
def alignment_snapshot_compute_task(snapshot_id: int) -> str:
    """Thin: the service claims the snapshot, so a redelivered message does nothing twice."""
    return alignment_snapshot_compute(snapshot_id=snapshot_id).status


@shared_task(name="judges.item_parts_measure")
def item_parts_measure_task(domain_id: int | None = None) -> list[str]:
    """Measure and store the item text parts of one domain (or every domain)."""
    domains = Domain.objects.filter(id=domain_id) if domain_id else Domain.objects.order_by("key")
    return [f"{d.key}:{item_parts_measure(domain=d).parts}" for d in domains]
