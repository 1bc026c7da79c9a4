from celery import shared_task


@shared_task(name="decisions.recompute", acks_late=True)
def decisions_recompute_task(snapshot_id: int) -> str:
    """Thin: the service claims the snapshot, so a redelivered message does nothing twice."""
    from apps.decisions.services import decisions_recompute

    return decisions_recompute(snapshot_id=snapshot_id).status
