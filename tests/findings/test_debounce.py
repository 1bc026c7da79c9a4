"""Rating changes queue one debounced findings recompute, on the real Redis broker."""

from __future__ import annotations

import json

import pytest
import redis
from django.conf import settings

from apps.findings.models import FindingSnapshot
from apps.findings.services import findings_mark_stale
from tests.workers import purge_queue

TASK = "findings.findings_recompute"


def _messages() -> list[dict]:
    r = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    return [
        m
        for m in (json.loads(raw) for raw in r.lrange("celery", 0, -1))
        if m["headers"].get("task") == TASK
    ]


@pytest.fixture
def empty_queue():
    purge_queue()
    yield
    purge_queue()


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_changes_queues_one_recompute_and_changes_after_its_claim_queue_one_more(
    empty_queue,
):
    for _ in range(200):
        findings_mark_stale()
    first = FindingSnapshot.objects.get()
    assert len(_messages()) == 1 and _messages()[0]["headers"]["eta"] is not None
    assert FindingSnapshot.objects.filter(id=first.id, status="queued").update(status="running")
    for _ in range(200):
        findings_mark_stale()
    assert len(_messages()) == 2
    assert FindingSnapshot.objects.filter(status="queued").count() == 1
