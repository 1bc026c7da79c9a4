"""A reviewer's judge work lost with the broker is sent again within a minute, like the snapshots.

Issue 29 measured 609 s: a rating change's scheduling message (sent with the debounce countdown,
so a worker holds it until it is due) was lost in a Redis restart, and only the reclaim's
JUDGE_REQUEUE_AFTER_SECONDS (600) sent it again. Here a real worker with beat (-B) consumes a
private redis-server without persistence, which is restarted while the worker holds the message.
"""

from __future__ import annotations

import datetime as dt
import shutil
import time

import pytest
from django.utils import timezone

from apps.judges import services
from apps.judges.models import JudgeConfig, JudgeRun, JudgeScheduleRequest
from apps.judges.services import dispatch
from tests.judges.test_worker import QueueWorker
from tests.outages import PrivateRedis, celery_sending_to
from tests.workers import wait_for

pytestmark = [
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]


@pytest.fixture
def private_redis():
    server = PrivateRedis()
    server.start()
    yield server
    server.stop()


def test_a_reviewers_judge_work_lost_in_a_redis_restart_is_sent_again_by_beat_and_judged(
    two_reviewers_history, private_redis, settings, tmp_path
):
    rita, _, _ = two_reviewers_history
    # Shorter than production (30 s debounce, 30 s resend, 30 s reclaim) so the test takes
    # seconds; JUDGE_REQUEUE_AFTER_SECONDS keeps its 600 s, the old and only way back.
    timings = {
        "JUDGE_DEBOUNCE_SECONDS": "4",
        "SNAPSHOT_RESEND_SECONDS": "3",
        "JUDGE_RECLAIM_SECONDS": "2",
    }
    settings.JUDGE_DEBOUNCE_SECONDS = 4
    worker = QueueWorker(
        queue="celery,judges",
        extra_env={
            **timings,
            "CELERY_BROKER_URL": private_redis.url,
            "CACHE_URL": private_redis.url.replace("/0", "/1"),
            "LLM_BASE_URL": "",
        },
        extra_args=("-B", "-s", str(tmp_path / "beat-schedule")),
    ).start()
    try:
        with celery_sending_to(private_redis.url):
            assert services.judge_ratings_changed(reviewer_ids=[rita.id]) == 1
        wait_for(
            lambda: "judges.judge_runs_schedule" in worker.log(),
            message=f"the worker did not receive the scheduling:\n{worker.log()[-3000:]}",
        )
        private_redis.stop()
        time.sleep(1)
        private_redis.start()
        restarted = time.monotonic()
        assert JudgeScheduleRequest.objects.filter(reviewer=rita, status="queued").exists()

        wait_for(
            lambda: (
                JudgeRun.objects.filter(reviewer=rita).exists()
                and not JudgeRun.objects.filter(reviewer=rita, status__in=JudgeRun.ACTIVE).exists()
            ),
            timeout=120,
            interval=0.5,
            message=f"rita's judge runs never came:\n{worker.log()[-4000:]}",
        )
        took = time.monotonic() - restarted
        assert worker.process is not None and worker.process.poll() is None, worker.log()
    finally:
        worker.stop()
    assert "lost schedulings sent again" in worker.log(), "sent again by the reclaim"
    # Due 4 s after it was sent, overdue 3 s later, found by the next 2 s pass, then judged:
    # with production's 30/30/30 s the same path takes about a minute, never 600 s.
    assert took < 60, took
    runs = list(JudgeRun.objects.filter(reviewer=rita).values_list("scope_key", "status"))
    assert all(status == "done" for _, status in runs), runs
    assert len({key for key, _ in runs}) == len(runs), "one run per scope, no duplicates"
    assert not JudgeScheduleRequest.objects.filter(reviewer=rita).exists()


def test_a_queued_run_whose_message_is_gone_is_sent_again_once_the_judges_queue_is_empty(
    two_reviewers_history, domain, broker, settings
):
    from django.core.cache import cache

    cache.clear()
    rita, otto, _ = two_reviewers_history
    settings.SNAPSHOT_RESEND_SECONDS = 30
    services.judge_configs_ensure_defaults()
    configs = list(JudgeConfig.objects.filter(is_active=True))
    lost, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=configs,
        reviewer=rita,
        enqueue=False,
    )
    JudgeRun.objects.filter(id=lost.id).update(updated_at=timezone.now() - dt.timedelta(minutes=1))

    # Another run's message waits in the judges queue: rita's may be waiting behind it.
    waiting, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=configs,
        reviewer=otto,
    )
    assert dispatch.runs_waiting_in_broker() == 1
    assert services.judge_runs_reclaim()["lost"] == 0

    # The queue is empty, and rita's run was never taken: its message is gone. Sent again, once.
    broker.purge()
    assert dispatch.runs_waiting_in_broker() == 0
    # (otto's message went too, but his run is not overdue yet: its turn comes on a later pass.)
    assert services.judge_runs_reclaim()["lost"] == 1
    assert broker.run_ids_sent() == [lost.id]
    assert services.judge_runs_reclaim()["lost"] == 0, "not again on the next pass"
