import json

import pytest
import redis
from django.conf import settings
from django.db import transaction

from apps.core.errors import ApplicationError
from apps.disagreement.models import MetricSlice, MetricSnapshot
from apps.disagreement.services import (
    AUTO_SCOPE,
    metrics_mark_stale,
    metrics_recompute,
    metrics_request_recompute,
)
from apps.disagreement.tasks import metrics_recompute_task
from apps.screening.services.ratings import rating_submit
from tests.factories import AssignmentFactory, IdeaFactory
from tests.workers import purge_queue

TASK = "disagreement.metrics_recompute"


def recompute_messages() -> list[dict]:
    """Messages for our task waiting in the real Redis queue (countdown tasks wait there too)."""
    r = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    found = []
    for raw in r.lrange("celery", 0, -1):
        message = json.loads(raw)
        if message["headers"].get("task") == TASK:
            found.append(message)
    return found


@pytest.fixture
def empty_queue():
    purge_queue()
    yield
    purge_queue()


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_500_rating_changes_enqueues_a_single_recompute(reviewer, domain, empty_queue):
    ideas = [IdeaFactory(patent__domain=domain) for _ in range(84)]
    for idea in ideas:
        AssignmentFactory(reviewer=reviewer, idea=idea)
    # 84 submissions x 6 dimensions = 504 rating changes, each committed on its own.
    for i, idea in enumerate(ideas):
        rating_submit(
            reviewer=reviewer,
            idea=idea,
            scores={
                "specificity": 3 + i % 2,
                "technical_validity": 2 + i % 3,
                "innovativeness": 1 + i % 5,
                "competitive_advantage": 1 + i % 4,
                "need_validity": i % 4,
                "market_size": (i + 1) % 4,
            },
        )
    assert len(recompute_messages()) == 1
    snapshot = MetricSnapshot.objects.get()
    assert snapshot.status == MetricSnapshot.Status.QUEUED and snapshot.scope == AUTO_SCOPE
    assert recompute_messages()[0]["headers"]["eta"] is not None  # debounced by a countdown


@pytest.mark.django_db(transaction=True)
def test_changes_arriving_while_a_recompute_runs_queue_exactly_one_more(db, empty_queue):
    for _ in range(250):
        metrics_mark_stale()
    first = MetricSnapshot.objects.get()
    # A worker claims it, as the task does; later changes must not be lost...
    assert MetricSnapshot.objects.filter(id=first.id, status="queued").update(status="running") == 1
    for _ in range(250):
        metrics_mark_stale()
    # ...and must not multiply either.
    assert len(recompute_messages()) == 2
    assert MetricSnapshot.objects.filter(status="queued").count() == 1


@pytest.mark.django_db
def test_a_recompute_stores_the_metrics_and_a_retried_task_does_not_redo_it(planted):
    snapshot = MetricSnapshot.objects.create(scope=AUTO_SCOPE)
    assert metrics_recompute_task(snapshot.id) == "done"
    snapshot.refresh_from_db()
    assert snapshot.status == "done" and snapshot.progress == 100
    assert snapshot.n_ratings == len(planted)
    assert snapshot.latest_rating_at is not None and snapshot.duration_ms is not None
    assert {c["domain"] for c in snapshot.result["cells"]} == {"nlp", "materials", "__all__"}
    assert "pairwise" not in snapshot.result and "strictness" not in snapshot.result
    slices = MetricSlice.objects.filter(snapshot=snapshot).count()
    assert slices > 0
    computed_at = snapshot.computed_at

    # The message is delivered again (worker lost, acks_late): nothing is computed twice.
    assert metrics_recompute_task(snapshot.id) == "done"
    snapshot.refresh_from_db()
    assert snapshot.computed_at == computed_at
    assert MetricSlice.objects.filter(snapshot=snapshot).count() == slices


@pytest.mark.django_db
def test_a_failing_computation_is_recorded_on_the_snapshot(planted, monkeypatch):
    import apps.disagreement.analysis as analysis

    def broken(*args, **kwargs):
        raise ValueError("bad scale for dimension 'x'")

    monkeypatch.setattr(analysis, "compute_metrics", broken)
    snapshot = MetricSnapshot.objects.create(scope=AUTO_SCOPE)
    metrics_recompute(snapshot_id=snapshot.id)
    snapshot.refresh_from_db()
    assert snapshot.status == "failed" and "bad scale for dimension 'x'" in snapshot.error


@pytest.mark.django_db(transaction=True)
def test_pressing_recompute_twice_joins_the_queued_recompute(manager, empty_queue):
    first = metrics_request_recompute(actor=manager)
    second = metrics_request_recompute(actor=manager)
    assert first.id == second.id
    assert MetricSnapshot.objects.count() == 1
    assert {m["headers"]["argsrepr"] for m in recompute_messages()} == {f"[{first.id}]"}


@pytest.mark.django_db
def test_it_refuses_a_recompute_from_a_reviewer_and_bad_dates(reviewer, manager):
    with pytest.raises(ApplicationError):
        metrics_request_recompute(actor=reviewer)
    import datetime as dt

    with pytest.raises(ApplicationError) as info:
        metrics_request_recompute(
            actor=manager, since=dt.date(2025, 5, 2), until=dt.date(2025, 5, 1)
        )
    assert info.value.errors[0].field == "until"
    with pytest.raises(ApplicationError) as info:
        metrics_request_recompute(actor=manager, level="cardinal")
    assert info.value.errors[0].field == "level"


@pytest.fixture
def dead_broker():
    """Point the real Celery app at a port where nothing listens (pools are rebuilt per URL,
    so nothing is closed: the session's worker and queue keep working afterwards)."""
    from config.celery import app

    keys = ("broker_url", "broker_write_url", "broker_connection_retry", "task_publish_retry")
    saved = {k: app.conf.get(k) for k in keys}

    def rebuild(**conf):
        app.conf.update(conf)
        app._pool = None
        app.amqp._producer_pool = None

    dead = "redis://127.0.0.1:1/0"
    rebuild(
        broker_url=dead,
        broker_write_url=dead,
        broker_connection_retry=False,
        task_publish_retry=False,
    )
    yield
    rebuild(**saved)


@pytest.mark.django_db(transaction=True)
def test_it_fails_loudly_when_the_broker_is_down_and_computes_nothing(manager, dead_broker):
    with pytest.raises(ApplicationError, match="task queue is unreachable"):
        metrics_request_recompute(actor=manager)
    snapshot = MetricSnapshot.objects.get()
    assert snapshot.status == "failed" and "unreachable" in snapshot.error
    assert snapshot.result is None


@pytest.mark.django_db(transaction=True)
def test_a_rating_change_with_the_broker_down_is_saved_and_the_failure_recorded(
    reviewer, idea, dead_broker
):
    with transaction.atomic():
        rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 1})
    assert reviewer.ratings.count() == 6
    assert MetricSnapshot.objects.get().status == "failed"


def test_the_category_switch_is_computed_into_its_own_snapshot(planted):
    from tests.disagreement.conftest import compute_snapshot

    default = compute_snapshot()
    included = compute_snapshot(include_categories=True)
    assert (default.scope, included.scope) == ("ordinal", "ordinal+categories")
    assert default.result["categories_included"] is False
    assert included.result["categories_included"] is True

    def need_scores(snapshot):
        (cell,) = [
            c
            for c in snapshot.result["cells"]
            if (c["domain"], c["dimension"], c["background"])
            == ("__all__", "need_validity", "__all__")
        ]
        return cell["fine"]["n_scores"]

    zeros = default.result["categories"]["scopes"]
    n_zero = next(
        s["n_category"]
        for s in zeros
        if (s["domain"], s["dimension"]) == ("__all__", "need_validity")
    )
    assert n_zero > 0
    assert need_scores(included) > need_scores(default)
