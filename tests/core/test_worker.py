import pytest

from apps.core.tasks import ping

pytestmark = pytest.mark.worker


def test_a_real_worker_consumes_the_redis_queue(transactional_db, celery_worker):
    ping.delay()
    from tests.workers import wait_for

    wait_for(
        lambda: "core.ping" in celery_worker.log() and "succeeded" in celery_worker.log(),
        timeout=20,
        message=celery_worker.log(),
    )
