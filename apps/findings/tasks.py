"""Thin Celery tasks: ids in, one service call. The services send them by name
(`apps.findings.services.FINDINGS`), so this module imports the services and never the other
way round."""

from celery import shared_task

from apps.findings import services


@shared_task(name=services.FINDINGS.task, acks_late=True)
def findings_recompute_task(snapshot_id: int) -> str:
    """Thin: the service claims the snapshot, so a redelivered message does nothing twice."""
    return services.findings_recompute(snapshot_id=snapshot_id).status


@shared_task(name="findings.resend_lost")
def findings_resend_lost_task() -> list[int]:
    """Periodic (Celery beat): queued recomputes whose message was lost are sent again."""
    return services.findings_resend_lost()
