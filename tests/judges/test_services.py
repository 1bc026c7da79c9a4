"""Judge services against the real database: scheduling, execution, idempotency, cancel, history."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.judges import services
from apps.judges.models import (
    JudgeConfig,
    JudgeFinal,
    JudgeHistory,
    JudgePrediction,
    JudgeRun,
    JudgeRunChunk,
)
from apps.screening.services.ratings import rating_submit
from tests.judges.helpers import make_ideas, reviewer_with_assignments, small_configs
from tests.workers import wait_for

pytestmark = pytest.mark.django_db

PASSING = {
    "specificity": 3,
    "technical_validity": 2,
    "innovativeness": 2,
    "competitive_advantage": 2,
    "need_validity": 1,
    "market_size": 1,
}


def _loo(domain, reviewer, configs, dims=("innovativeness",)):
    run, created = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=list(dims),
        configs=configs,
        reviewer=reviewer,
        enqueue=False,
    )
    return run


def test_it_schedules_evaluation_and_prediction_once_a_reviewer_reaches_min_history(
    domain, django_capture_on_commit_callbacks, broker, settings
):
    settings.JUDGE_DEBOUNCE_SECONDS = 0
    small_configs(min_history=3)
    ideas = make_ideas(domain, 5)
    rita = reviewer_with_assignments(domain, "rita", ideas)

    def submit(idea, scores):
        with django_capture_on_commit_callbacks(execute=True):
            rating_submit(reviewer=rita, idea=idea, scores=scores)
        # The scheduling task, run here instead of on a worker (test_worker.py has both).
        for message in broker.sent("judges.judge_runs_schedule"):
            with django_capture_on_commit_callbacks(execute=True):
                services.judge_schedule_requests_run(reviewer_ids=message.kwargs["reviewer_ids"])
        schedules = broker.sent("judges.judge_runs_schedule")
        scheduled.extend(m.kwargs["reviewer_ids"] for m in schedules)
        runs_sent.extend(broker.run_ids_sent())
        broker.purge()

    scheduled: list[list[int]] = []
    runs_sent: list[int] = []
    for idea in ideas[:2]:
        submit(idea, PASSING)
    assert JudgeRun.objects.count() == 0, "two ratings are below min_history"

    submit(ideas[2], {**PASSING, "innovativeness": 4})
    runs = JudgeRun.objects.filter(reviewer=rita)
    # one LOO and one prediction run, each over the six dimensions (all are scored here)
    six = sorted(PASSING)
    assert [r.dimensions for r in runs.filter(purpose="loo_evaluation")] == [six]
    assert [r.dimensions for r in runs.filter(purpose="prediction")] == [six]
    assert set(runs.values_list("status", flat=True)) == {"queued"}
    loo = runs.get(purpose="loo_evaluation")
    assert {c.kind for c in loo.configs.all()} == {"zero_shot", "aggregate", "personalized"}
    pred = runs.get(purpose="prediction")
    assert {c.kind for c in pred.configs.all()} == {"personalized"}
    assert sorted(runs_sent) == sorted(runs.values_list("id", flat=True))
    assert scheduled == [[rita.id]] * 3, "one scheduling task per rating change"


def test_it_does_not_duplicate_a_queued_run_when_ratings_change_again(domain, broker):
    small_configs(min_history=2)
    from tests.judges.helpers import rate

    ideas = make_ideas(domain, 4)
    rita = reviewer_with_assignments(domain, "rita", [])
    rate(rita, ideas[:3], "innovativeness", lambda i: 2)
    services.judge_runs_schedule(reviewer_ids=[rita.id])
    services.judge_runs_schedule(reviewer_ids=[rita.id])
    assert JudgeRun.objects.filter(purpose="loo_evaluation").count() == 1
    assert JudgeRun.objects.filter(purpose="prediction").count() == 1


def test_the_database_refuses_a_second_active_run_for_the_same_scope(domain, two_reviewers_history):
    rita, _, _ = two_reviewers_history
    run = _loo(domain, rita, small_configs())
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgeRun.objects.create(
            purpose=run.purpose,
            domain=domain,
            dimensions=run.dimensions,
            scope_key=run.scope_key,
            status="running",
        )


def test_a_trigger_while_running_marks_the_run_for_a_rerun_that_follows(
    domain, two_reviewers_history, broker
):
    rita, _, _ = two_reviewers_history
    configs = small_configs(min_history=5)
    run = _loo(domain, rita, configs)
    JudgeRun.objects.filter(id=run.id).update(status="running", heartbeat_at=timezone.now())
    services.judge_runs_schedule(reviewer_ids=[rita.id])
    run.refresh_from_db()
    assert run.rerun_requested
    assert JudgeRun.objects.filter(purpose="loo_evaluation").count() == 1
    # finishing it queues a fresh run for the same scope
    JudgeRun.objects.filter(id=run.id).update(status="queued")
    assert services.judge_run_execute(run_id=run.id) == "done"
    fresh = JudgeRun.objects.filter(purpose="loo_evaluation").exclude(id=run.id).get()
    assert fresh.status == "queued" and fresh.scope_key == run.scope_key


def test_it_predicts_every_rated_item_leave_one_out_and_votes_the_finals(
    domain, two_reviewers_history
):
    rita, otto, ideas = two_reviewers_history
    configs = small_configs(seeds=3)
    run = _loo(domain, rita, configs)
    assert services.judge_run_execute(run_id=run.id) == "done"
    run.refresh_from_db()
    # 12 targets x (zero-shot k0 once: without examples its seeds repeat it + aggregate k2 x 3
    # seeds + personalized k2 x 3 seeds)
    assert run.total == run.done == 12 * (1 + 3 + 3)
    assert run.status == "done" and run.finished_at is not None
    assert JudgeFinal.objects.filter(run=run).count() == 12 * 3
    pred = JudgePrediction.objects.filter(run=run, kind="personalized").first()
    assert pred.backend == "local" and pred.prompt_fingerprint and len(pred.example_rating_ids) == 2
    # examples come from Rita's own other ratings, never the target idea's patent
    from apps.screening.models import Rating

    examples = Rating.objects.filter(id__in=pred.example_rating_ids)
    assert {r.reviewer_id for r in examples} == {rita.id}
    assert pred.idea.patent_id not in {r.idea.patent_id for r in examples}
    agg = JudgePrediction.objects.filter(run=run, kind="aggregate").first()
    assert {r.reviewer_id for r in Rating.objects.filter(id__in=agg.example_rating_ids)} == {
        otto.id
    }
    assert list(run.history.values_list("new_value__status", flat=True)) == [
        "queued",
        "running",
        "done",
    ]


def test_running_a_finished_run_twice_changes_nothing(domain, two_reviewers_history):
    rita, _, _ = two_reviewers_history
    run = _loo(domain, rita, small_configs())
    services.judge_run_execute(run_id=run.id)
    before = sorted(
        JudgePrediction.objects.filter(run=run).values_list("id", "score", "confidence")
    )
    assert services.judge_run_execute(run_id=run.id) == "done"
    assert (
        sorted(JudgePrediction.objects.filter(run=run).values_list("id", "score", "confidence"))
        == before
    )


def test_a_run_left_running_by_a_dead_worker_is_resumed_without_duplicates(
    domain, two_reviewers_history
):
    rita, _, _ = two_reviewers_history
    run = _loo(domain, rita, small_configs())
    services.judge_run_execute(run_id=run.id)
    complete = sorted(
        JudgePrediction.objects.filter(run=run).values_list(
            "reviewer_id", "idea_id", "dimension_id", "kind", "k", "seed", "score"
        )
    )
    # Simulate a crash after some batches: part of the predictions, no finals, still "running",
    # the dead worker's leases left behind with their last heartbeat.
    keep = list(
        JudgePrediction.objects.filter(run=run).order_by("id").values_list("id", flat=True)[:10]
    )
    JudgePrediction.objects.filter(run=run).exclude(id__in=keep).delete()
    JudgeFinal.objects.filter(run=run).delete()
    dead = timezone.now() - timedelta(minutes=5)
    JudgeRun.objects.filter(id=run.id).update(
        status="running", done=10, finished_at=None, heartbeat_at=dead
    )
    JudgeRunChunk.objects.filter(run=run).update(
        status="running", lease_token="dead-worker", heartbeat_at=dead
    )

    assert services.judge_run_execute(run_id=run.id) == "done"
    resumed = sorted(
        JudgePrediction.objects.filter(run=run).values_list(
            "reviewer_id", "idea_id", "dimension_id", "kind", "k", "seed", "score"
        )
    )
    assert resumed == complete
    run.refresh_from_db()
    assert run.done == run.total == len(complete)
    assert JudgeFinal.objects.filter(run=run).count() == 36


def test_a_cancelled_run_is_not_executed_and_cannot_be_cancelled_twice(
    domain, two_reviewers_history, admin
):
    rita, _, _ = two_reviewers_history
    run = _loo(domain, rita, small_configs())
    services.judge_run_cancel(run=run, by=admin)
    assert services.judge_run_execute(run_id=run.id) == "cancelled"
    assert JudgePrediction.objects.filter(run=run).count() == 0
    with pytest.raises(ApplicationError, match="only queued or running"):
        services.judge_run_cancel(run=run, by=admin)
    assert run.history.last().changed_by == admin


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_cancelling_mid_run_stops_it_between_batches(
    transactional_db, domain, two_reviewers_history, fake_llm, settings, admin
):
    settings.LLM_API_KEY = "test-key"
    settings.LLM_ALLOWED_BASE_URLS = [fake_llm.base_url]
    fake_llm.latency = 0.1
    rita, _, _ = two_reviewers_history
    config = JudgeConfig.objects.create(
        name="llm",
        kind="personalized",
        backend="openai",
        base_url=fake_llm.base_url,
        model="fake-judge",
        shots=[2],
        seeds=2,
        concurrency=1,
    )
    run = _loo(domain, rita, [config])
    outcome: list[str] = []

    def execute() -> None:
        try:
            outcome.append(services.judge_run_execute(run_id=run.id))
        finally:
            connection.close()

    worker = threading.Thread(target=execute)
    worker.start()
    wait_for(lambda: JudgePrediction.objects.filter(run=run).count() >= 2, timeout=30)
    services.judge_run_cancel(run=run, by=admin)
    worker.join(timeout=30)
    assert outcome == ["cancelled"]
    stored = JudgePrediction.objects.filter(run=run).count()
    assert stored < 24, "the run stopped at the next batch, not at the end"
    assert len(fake_llm.chat_requests) <= stored + 2


def test_a_prediction_run_covers_only_ideas_the_reviewer_has_not_rated(
    domain, two_reviewers_history
):
    rita, _, ideas = two_reviewers_history
    configs = [c for c in small_configs() if c.kind == "personalized"]
    run, _ = services.judge_run_request(
        purpose="prediction",
        domain=domain,
        dimensions=["innovativeness"],
        configs=configs,
        reviewer=rita,
        enqueue=False,
    )
    services.judge_run_execute(run_id=run.id)
    predicted = set(JudgeFinal.objects.filter(run=run).values_list("idea_id", flat=True))
    assert predicted == {ideas[12].id, ideas[13].id}


def test_an_openai_config_without_an_endpoint_fails_the_run_with_a_clear_error(
    domain, two_reviewers_history, settings
):
    settings.LLM_BASE_URL = ""
    rita, _, _ = two_reviewers_history
    config = JudgeConfig.objects.create(
        name="llm", kind="personalized", backend="openai", shots=[2], seeds=1
    )
    run = _loo(domain, rita, [config])
    assert services.judge_run_execute(run_id=run.id) == "failed"
    run.refresh_from_db()
    assert "LLM_BASE_URL" in run.error


def test_config_changes_write_history(admin, settings):
    config = services.judge_config_create(
        by=admin, name="p", kind="personalized", backend="local", shots=[9, 1]
    )
    assert config.shots == [1, 9]
    services.judge_config_update(config=config, by=admin, confidence_threshold=70)
    services.judge_config_update(
        config=config, by=admin, confidence_threshold=70
    )  # no change, no row
    rows = list(
        JudgeHistory.objects.filter(config=config).values_list("event", "old_value", "new_value")
    )
    assert rows[0][0] == "config_created"
    # A new local configuration starts at the declared default threshold.
    default = settings.JUDGE_LOCAL_CONFIDENCE_THRESHOLD
    assert rows[1] == (
        "config_changed",
        {"confidence_threshold": default},
        {"confidence_threshold": 70},
    )
    assert len(rows) == 2


def test_it_refuses_a_bad_configuration_naming_the_field(admin):
    with pytest.raises(ApplicationError) as err:
        services.judge_config_create(
            by=admin, name="x", kind="personal", shots=[-1], confidence_threshold=120
        )
    fields = {e.field for e in err.value.errors}
    assert fields == {"kind", "shots", "confidence_threshold"}


def test_default_configurations_use_the_local_baseline_without_an_llm_endpoint(settings, db):
    settings.LLM_BASE_URL = ""
    services.judge_configs_ensure_defaults()
    assert set(JudgeConfig.objects.values_list("kind", "backend")) == {
        ("zero_shot", "local"),
        ("aggregate", "local"),
        ("personalized", "local"),
    }
    assert JudgeConfig.objects.first().backend_label == "Local baseline (not an LLM)"


def test_a_study_refuses_unknown_dimensions_and_duplicates(domain, two_reviewers_history, admin):
    configs = small_configs()
    with pytest.raises(ApplicationError) as err:
        services.judge_study_start(
            by=admin,
            domain=domain,
            dimensions=["novelty"],
            configs=configs,
            shots=[0, 2],
            seeds=1,
            enqueue=False,
        )
    assert err.value.errors[0].field == "dimensions" and err.value.errors[0].value == "novelty"
    run, created = services.judge_study_start(
        by=admin,
        domain=domain,
        dimensions=["innovativeness"],
        configs=configs,
        shots=[0, 2],
        seeds=1,
        enqueue=False,
    )
    again, created_again = services.judge_study_start(
        by=admin,
        domain=domain,
        dimensions=["innovativeness"],
        configs=configs,
        shots=[2, 0],
        seeds=1,
        enqueue=False,
    )
    assert created and not created_again and again.id == run.id


def test_an_endpoint_that_stays_overloaded_defers_the_run_which_resumes_later(
    domain, two_reviewers_history, fake_llm, settings
):
    settings.LLM_API_KEY = "test-key"
    settings.LLM_BACKOFF_BASE = 0.01
    rita, _, _ = two_reviewers_history
    config = JudgeConfig.objects.create(
        name="llm",
        kind="personalized",
        backend="openai",
        shots=[2],
        seeds=1,
        base_url=fake_llm.base_url,
        model="fake-judge",
        concurrency=1,
    )
    run = _loo(domain, rita, [config])
    for _ in range(12):  # more 429s than the backend retries once
        fake_llm.push_status(429, retry_after=0.01)
    with pytest.raises(services.RunDeferred):
        services.judge_run_execute(run_id=run.id)
    run.refresh_from_db()
    assert run.status == "running"  # not failed: the retried task picks it up
    assert services.judge_run_execute(run_id=run.id) == "done"
    run.refresh_from_db()
    assert run.done == run.total == 12 and run.tokens_in > 0 and run.calls >= 12
    assert JudgePrediction.objects.filter(run=run).exclude(error="").count() == 0


def test_the_dashboard_query_count_does_not_grow_with_reviewers(
    client, manager, domain, django_assert_max_num_queries
):
    from tests.factories import ReviewerFactory
    from tests.judges.helpers import rate

    ideas = make_ideas(domain, 12)
    configs = small_configs()
    for i in range(6):
        reviewer = ReviewerFactory(username=f"r{i}", profile=[domain])
        rate(reviewer, ideas, "innovativeness", lambda n, i=i: 1 + (n + i) % 4)
        if i < 2:
            services.judge_run_execute(run_id=_loo(domain, reviewer, configs).id)
    client.force_login(manager)
    with django_assert_max_num_queries(40):
        assert client.get("/judges/").status_code == 200


def test_a_queued_run_whose_message_was_lost_is_enqueued_again_on_the_next_trigger(
    domain, two_reviewers_history, broker, django_capture_on_commit_callbacks, settings
):
    settings.JUDGE_REQUEUE_AFTER_SECONDS = 60
    rita, _, _ = two_reviewers_history
    small_configs(min_history=5)
    with django_capture_on_commit_callbacks(execute=True):
        services.judge_runs_schedule(reviewer_ids=[rita.id])
    assert len(broker.run_ids_sent()) == 2
    with django_capture_on_commit_callbacks(execute=True):
        services.judge_runs_schedule(reviewer_ids=[rita.id])
    assert len(broker.run_ids_sent()) == 2, "a fresh queued run is not sent twice"

    JudgeRun.objects.update(updated_at=timezone.now() - timedelta(minutes=5))
    with django_capture_on_commit_callbacks(execute=True):
        services.judge_runs_schedule(reviewer_ids=[rita.id])
    assert len(broker.run_ids_sent()) == 4 and JudgeRun.objects.count() == 2


def test_the_task_run_twice_leaves_the_same_rows(domain, two_reviewers_history):
    from apps.judges.tasks import judge_run_execute_task

    rita, _, _ = two_reviewers_history
    run = _loo(domain, rita, small_configs())
    assert judge_run_execute_task.apply(args=(run.id,)).get() == "done"
    first = sorted(JudgePrediction.objects.filter(run=run).values_list("id", "score", "reason"))
    finals = sorted(JudgeFinal.objects.filter(run=run).values_list("id", "score", "kept"))
    assert judge_run_execute_task.apply(args=(run.id,)).get() == "done"
    assert (
        sorted(JudgePrediction.objects.filter(run=run).values_list("id", "score", "reason"))
        == first
    )
    assert sorted(JudgeFinal.objects.filter(run=run).values_list("id", "score", "kept")) == finals


def test_reasoning_similarity_uses_a_remote_embeddings_endpoint_and_caches_it(
    domain, two_reviewers_history, fake_llm, settings
):
    from apps.judges import selectors

    rita, otto, _ = two_reviewers_history
    configs = small_configs()
    for reviewer in (rita, otto):
        services.judge_run_execute(run_id=_loo(domain, reviewer, configs).id)
    settings.EMBEDDINGS_BASE_URL = fake_llm.base_url
    settings.EMBEDDINGS_API_KEY = "test-key"
    settings.EMBEDDINGS_MODEL = "fake-embed"
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    run_ids = list(JudgeRun.objects.values_list("id", flat=True))
    report = selectors.alignment_report(run_ids=run_ids)
    assert report["reasoning"] and report["reasoning_note"] == ""
    assert "personalized" in {r["kind"] for r in report["reasoning"]}
    calls = len([r for r in fake_llm.requests if "embeddings" in str(r.get("path", ""))])
    assert calls >= 1
    again = selectors.alignment_report(run_ids=run_ids)
    assert again["reasoning"] == report["reasoning"]
    assert len([r for r in fake_llm.requests if "embeddings" in str(r.get("path", ""))]) == calls
