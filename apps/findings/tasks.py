from celery import shared_task


@shared_task(name="findings.findings_recompute", acks_late=True)
def findings_recompute_task(snapshot_id: int) -> str:
    """Thin: the service claims the snapshot, so a redelivered message does nothing twice."""
    from apps.findings.services import findings_recompute

    return findings_recompute(snapshot_id=snapshot_id).status


@shared_task(name="findings.resend_lost")
def findings_resend_lost_task() -> list[int]:
    """Periodic (Celery beat): queued recomputes whose message was lost are sent again."""
    from apps.findings.services import findings_resend_lost

    return findings_resend_lost()
