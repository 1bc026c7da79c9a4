from celery import shared_task


@shared_task(name="core.ping")
def ping() -> str:
    """Lets tests and health checks confirm that a worker consumes the queue."""
    return "pong"
