from celery import shared_task


@shared_task(name="disagreement.metrics_recompute", acks_late=True)
def metrics_recompute_task(snapshot_id: int) -> str:
    """Thin: the service claims the snapshot, so a redelivered message does nothing twice."""
    from apps.disagreement.services import metrics_recompute

    return metrics_recompute(snapshot_id=snapshot_id).status


@shared_task(name="disagreement.metrics_resend_lost")
def metrics_resend_lost_task() -> list[int]:
    """Periodic (Celery beat): queued recomputes whose message was lost are sent again."""
    from apps.disagreement.services import metrics_resend_lost

    return metrics_resend_lost()
