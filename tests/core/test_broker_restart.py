"""The worker survives a Redis restart while it holds delayed tasks, and a snapshot whose
message was lost with Redis is sent again by the beat job.

A private Redis server (its own port, no persistence) is started and restarted here; the shared
Redis on 6379 is never touched. The worker is a real `celery worker` process on the test
database (tests/workers.py).
"""

from __future__ import annotations

import datetime as dt
import shutil
import time
from collections.abc import Iterator

import pytest
from django.utils import timezone

from apps.disagreement.models import MetricSnapshot, scope_key
from config.celery import app
from tests.outages import PrivateRedis
from tests.workers import CeleryWorker, wait_for

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    redis = PrivateRedis()
    redis.start()
    yield redis
    redis.stop()


def _send(broker_url: str, name: str, **options) -> None:
    with app.connection_for_write(broker_url) as connection:
        app.send_task(name, connection=connection, queue="celery", **options)


@pytest.mark.django_db(transaction=True)
def test_the_worker_survives_a_redis_restart_while_holding_delayed_tasks_and_resends_lost_snapshots(
    private_redis,
):
    worker = CeleryWorker(
        extra_env={
            "CELERY_BROKER_URL": private_redis.url,
            "CACHE_URL": private_redis.url.replace("/0", "/1"),
        }
    ).start()
    try:
        # Like three submits: each queues work with a countdown, held by the worker until due.
        for _ in range(3):
            _send(private_redis.url, "core.ping", countdown=60)
        wait_for(
            lambda: worker.log().count("core.ping") >= 3,
            message=f"the worker did not receive the delayed tasks:\n{worker.log()}",
        )

        private_redis.stop()
        time.sleep(3)
        private_redis.start()

        # A recompute whose countdown message was lost with Redis: still QUEUED long after due.
        snapshot = MetricSnapshot.objects.create(scope=scope_key(level="ordinal"), level="ordinal")
        MetricSnapshot.objects.filter(id=snapshot.id).update(
            created_at=timezone.now() - dt.timedelta(minutes=2)
        )
        # What beat sends every SNAPSHOT_RESEND_SECONDS; it may need the worker to reconnect first.
        _send(private_redis.url, "disagreement.metrics_resend_lost")

        wait_for(
            lambda: MetricSnapshot.objects.get(id=snapshot.id).status == "done",
            timeout=60,
            message=f"the lost snapshot was not computed after the restart:\n{worker.log()}",
        )
        assert worker.process is not None and worker.process.poll() is None, worker.log()
        assert "Unrecoverable error" not in worker.log()
    finally:
        worker.stop()


def test_the_beat_resends_lost_snapshots_within_a_minute():
    from django.conf import settings

    entry = settings.CELERY_BEAT_SCHEDULE["disagreement-resend"]
    assert entry["task"] == "disagreement.metrics_resend_lost"
    # Overdue after SNAPSHOT_RESEND_SECONDS, found by the next pass: at most twice that.
    assert 2 * settings.SNAPSHOT_RESEND_SECONDS <= 60
    assert entry["schedule"] <= settings.SNAPSHOT_RESEND_SECONDS


@pytest.mark.django_db
def test_the_reclaim_sends_a_lost_alignment_snapshot_again_once_per_window(
    django_capture_on_commit_callbacks,
):
    from django.core.cache import cache

    from apps.judges.models import AlignmentSnapshot
    from apps.judges.services import judge_runs_reclaim
    from tests.workers import purge_queue

    cache.clear()
    fresh = AlignmentSnapshot.objects.create(scope="auto")
    lost = AlignmentSnapshot.objects.create(scope="auto|nlp")
    AlignmentSnapshot.objects.filter(id=lost.id).update(
        created_at=timezone.now() - dt.timedelta(minutes=2)
    )
    try:
        assert judge_runs_reclaim()["alignments"] == 1
        assert judge_runs_reclaim()["alignments"] == 0, "not sent on every pass"
        assert AlignmentSnapshot.objects.get(id=fresh.id).status == "queued"
    finally:
        purge_queue()


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["decisions", "findings"])
def test_lost_decision_and_findings_recomputes_are_sent_again_once_per_window(kind):
    from django.conf import settings
    from django.core.cache import cache

    from apps.decisions.models import DecisionSnapshot
    from apps.decisions.services import decisions_resend_lost
    from apps.findings.models import FindingSnapshot
    from apps.findings.services import findings_resend_lost
    from tests.workers import purge_queue

    entry = settings.CELERY_BEAT_SCHEDULE[f"{kind}-resend"]
    assert entry["task"] == f"{kind}.resend_lost"
    assert entry["schedule"] <= settings.SNAPSHOT_RESEND_SECONDS
    cache.clear()
    if kind == "decisions":
        model, resend = DecisionSnapshot, decisions_resend_lost
        fresh, lost = model.objects.create(), model.objects.create(scope="other")
    else:
        model, resend = FindingSnapshot, findings_resend_lost
        fresh = model.objects.create(scope="t=0.5", threshold=0.5)
        lost = model.objects.create(scope="t=0.6", threshold=0.6)
    model.objects.filter(id=lost.id).update(created_at=timezone.now() - dt.timedelta(minutes=3))
    try:
        assert resend() == [lost.id]
        assert resend() == [], "not sent on every pass"
        assert model.objects.get(id=fresh.id).status == "queued"
    finally:
        purge_queue()
