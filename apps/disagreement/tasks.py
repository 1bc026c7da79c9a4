"""Thin Celery tasks: ids in, one service call. The services send them by name
(`apps.disagreement.services.METRICS`), so this module imports the services and never the
other way round."""

from celery import shared_task

from apps.disagreement import services


@shared_task(name=services.METRICS.task, acks_late=True)
def metrics_recompute_task(snapshot_id: int) -> str:
    """Thin: the service claims the snapshot, so a redelivered message does nothing twice."""
    return services.metrics_recompute(snapshot_id=snapshot_id).status


@shared_task(name="disagreement.metrics_resend_lost")
def metrics_resend_lost_task() -> list[int]:
    """Periodic (Celery beat): queued recomputes whose message was lost are sent again."""
    return services.metrics_resend_lost()
