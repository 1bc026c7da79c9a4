"""Thin Celery tasks: ids in, one service call. The services send them by name
(`apps.decisions.services.DECISIONS`), so this module imports the services and never the other
way round."""

from celery import shared_task

from apps.decisions import services


@shared_task(name=services.DECISIONS.task, acks_late=True)
def decisions_recompute_task(snapshot_id: int) -> str:
    """Thin: the service claims the snapshot, so a redelivered message does nothing twice."""
    return services.decisions_recompute(snapshot_id=snapshot_id).status


@shared_task(name="decisions.resend_lost")
def decisions_resend_lost_task() -> list[int]:
    """Periodic (Celery beat): queued recomputes whose message was lost are sent again."""
    return services.decisions_resend_lost()
