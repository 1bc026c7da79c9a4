from celery import shared_task


@shared_task(name="decisions.recompute", acks_late=True)
def decisions_recompute_task(snapshot_id: int) -> str:
    """Thin: the service claims the snapshot, so a redelivered message does nothing twice."""
    from apps.decisions.services import decisions_recompute

    return decisions_recompute(snapshot_id=snapshot_id).status


@shared_task(name="decisions.resend_lost")
def decisions_resend_lost_task() -> list[int]:
    """Periodic (Celery beat): queued recomputes whose message was lost are sent again."""
    from apps.decisions.services import decisions_resend_lost

    return decisions_resend_lost()
