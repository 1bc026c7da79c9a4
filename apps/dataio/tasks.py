"""Thin Celery tasks of the catalog: ids in, one service call.

Sent by name (apps.dataio.services.import_jobs), so the services never import this module."""

from __future__ import annotations

from celery import shared_task

from apps.dataio.services.import_job_worker import import_job_execute, import_jobs_reclaim
from apps.dataio.services.import_jobs import EXECUTE_TASK


# acks_late (also the global default): a worker that dies mid-import leaves the message to be
# delivered again; the job's lease and its one transaction make a second delivery harmless.
@shared_task(name=EXECUTE_TASK, acks_late=True)
def import_job_execute_task(job_id: int) -> str:
    return import_job_execute(job_id=job_id)


@shared_task(name="catalog.import_jobs_reclaim")
def import_jobs_reclaim_task() -> dict[str, int]:
    """Periodic (Celery beat): resend jobs whose worker died, delete spool files left over."""
    return import_jobs_reclaim()
