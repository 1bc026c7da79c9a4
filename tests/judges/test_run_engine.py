"""The run engine against the real database and broker: stored plans, leases, reclaim,
calibration, chunks for LLM runs."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from apps.decisions.models import DecisionSnapshot
from apps.judges import services
from apps.judges.engine.calibration import Calibration
from apps.judges.models import (
    JudgeCalibration,
    JudgeConfig,
    JudgePrediction,
    JudgeRun,
    JudgeRunChunk,
    JudgeRunPlan,
)
from tests.judges.helpers import rate, small_configs
from tests.workers import purge_queue

pytestmark = pytest.mark.django_db

DEAD = timedelta(minutes=5)


def _loo(domain, reviewer, configs, **kwargs):
    run, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=configs,
        reviewer=reviewer,
        enqueue=False,
        **kwargs,
    )
    return run


def _crash(run, keep: int) -> None:
    """What a SIGKILL leaves: some predictions, the run running, leases with old heartbeats."""
    ids = list(
        JudgePrediction.objects.filter(run=run).order_by("id").values_list("id", flat=True)[:keep]
    )
    JudgePrediction.objects.filter(run=run).exclude(id__in=ids).delete()
    JudgeRun.objects.filter(id=run.id).update(
        status="running", finished_at=None, heartbeat_at=timezone.now() - DEAD
    )
    JudgeRunChunk.objects.filter(run=run).update(
        status="running", lease_token="dead", heartbeat_at=timezone.now() - DEAD
    )


def test_a_resumed_run_executes_the_plan_it_was_created_with_not_newer_ratings(
    domain, two_reviewers_history
):
    rita, _, ideas = two_reviewers_history
    run = _loo(domain, rita, small_configs())
    assert services.judge_run_execute(run_id=run.id) == "done"
    planned = JudgeRunPlan.objects.get(run=run)
    before = sorted(JudgePrediction.objects.filter(run=run).values_list("idea_id", "kind", "k"))
    _crash(run, keep=5)
    rate(rita, ideas[12:], "innovativeness", lambda i: 3)  # two more ratings meanwhile

    assert services.judge_run_execute(run_id=run.id) == "done"
    run.refresh_from_db()
    after = sorted(JudgePrediction.objects.filter(run=run).values_list("idea_id", "kind", "k"))
    assert after == before, "the same 12 targets, not 14"
    assert run.total == run.done == len(before) == planned.units
    assert JudgeRunPlan.objects.get(run=run).targets == planned.targets


def test_a_chunk_whose_holder_is_alive_is_not_taken_over(domain, two_reviewers_history):
    rita, _, _ = two_reviewers_history
    run = _loo(domain, rita, small_configs())
    assert services.judge_run_execute(run_id=run.id) == "done"
    _crash(run, keep=5)
    JudgeRunChunk.objects.filter(run=run).update(heartbeat_at=timezone.now())  # alive after all

    assert services.judge_run_execute(run_id=run.id) == "working"
    assert JudgePrediction.objects.filter(run=run).count() == 5, "nothing judged twice"


def test_asking_for_a_study_whose_run_is_stuck_sends_that_run_again(
    domain, two_reviewers_history, admin, broker, django_capture_on_commit_callbacks
):
    configs = small_configs()
    study = dict(
        by=admin,
        domain=domain,
        dimensions=["innovativeness"],
        configs=configs,
        shots=[0, 2],
        seeds=1,
    )
    with django_capture_on_commit_callbacks(execute=True):
        run, created = services.judge_study_start(**study)
    assert created and broker.run_ids_sent() == [run.id]
    JudgeRun.objects.filter(id=run.id).update(status="running", heartbeat_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):
        again, created = services.judge_study_start(**study)
    assert (again.id, created) == (run.id, False)
    assert broker.run_ids_sent() == [run.id], "a live run is not sent twice"

    JudgeRun.objects.filter(id=run.id).update(heartbeat_at=timezone.now() - DEAD)
    with django_capture_on_commit_callbacks(execute=True):
        again, created = services.judge_study_start(**study)
    assert (again.id, created) == (run.id, False)
    assert broker.run_ids_sent() == [run.id, run.id], "the stuck run was sent again"


def test_the_reclaim_sends_again_dead_workers_runs_and_lost_messages_once(
    domain, two_reviewers_history, broker, settings, django_capture_on_commit_callbacks
):
    settings.JUDGE_REQUEUE_AFTER_SECONDS = 60
    rita, otto, _ = two_reviewers_history
    configs = small_configs()
    dead = _loo(domain, rita, configs)
    lost = _loo(domain, otto, configs)
    JudgeRun.objects.filter(id=dead.id).update(status="running", heartbeat_at=timezone.now() - DEAD)
    JudgeRun.objects.filter(id=lost.id).update(updated_at=timezone.now() - DEAD)

    with django_capture_on_commit_callbacks(execute=True):
        summary = services.judge_runs_reclaim()
    assert summary == {"stale": 1, "lost": 1, "schedules": 0, "alignments": 0}
    assert sorted(broker.run_ids_sent()) == sorted([dead.id, lost.id])
    with django_capture_on_commit_callbacks(execute=True):
        assert services.judge_runs_reclaim() == {
            "stale": 0,
            "lost": 0,
            "schedules": 0,
            "alignments": 0,
        }
    assert len(broker.run_ids_sent()) == 2, "not sent again while they wait in the queue"


def test_an_evaluation_stores_a_calibration_that_later_predictions_of_the_scope_apply(
    domain, two_reviewers_history
):
    rita, _, _ = two_reviewers_history
    configs = small_configs()
    assert services.judge_run_execute(run_id=_loo(domain, rita, configs).id) == "done"
    fits = {(c.dimension, c.kind, c.backend): c for c in JudgeCalibration.objects.all()}
    assert set(fits) == {
        ("innovativeness", "zero_shot", "local"),
        ("innovativeness", "aggregate", "local"),
        ("innovativeness", "personalized", "local"),
    }
    assert fits[("innovativeness", "personalized", "local")].n == 12

    run, _ = services.judge_run_request(
        purpose="prediction",
        domain=domain,
        dimensions=["innovativeness"],
        configs=[configs[2]],
        reviewer=rita,
        enqueue=False,
    )
    assert services.judge_run_execute(run_id=run.id) == "done"
    fit = Calibration.from_dict(fits[("innovativeness", "personalized", "local")].fit)
    rows = list(JudgePrediction.objects.filter(run=run).values_list("raw_confidence", "confidence"))
    assert rows and all(raw is not None for raw, _ in rows)
    expected = fit.apply(np.array([raw for raw, _ in rows], dtype=float))
    assert [c for _, c in rows] == [int(v) for v in expected]


def test_a_fit_on_more_predictions_is_kept_and_one_on_as_many_or_fewer_is_replaced(
    domain, two_reviewers_history
):
    rita, _, _ = two_reviewers_history
    configs = small_configs()
    assert services.judge_run_execute(run_id=_loo(domain, rita, configs).id) == "done"
    scope = {"dimension": "innovativeness", "kind": "personalized", "backend": "local"}
    fitted = JudgeCalibration.objects.get(**scope)
    # A study's fit on more predictions than one reviewer's evaluation has is kept...
    JudgeCalibration.objects.filter(**scope).update(n=1000, fit={"kind": "identity"})
    assert services.judge_run_execute(run_id=_loo(domain, rita, configs).id) == "done"
    kept = JudgeCalibration.objects.get(**scope)
    assert (kept.n, kept.fit) == (1000, {"kind": "identity"})
    # ...one on fewer is replaced by the evaluation's, as is a fit of the same size.
    JudgeCalibration.objects.filter(**scope).update(n=fitted.n, fit={"kind": "identity"})
    third = _loo(domain, rita, configs)
    assert services.judge_run_execute(run_id=third.id) == "done"
    replaced = JudgeCalibration.objects.get(**scope)
    assert (replaced.n, replaced.fit, replaced.run_id) == (fitted.n, fitted.fit, third.id)
    assert replaced.updated_at > fitted.updated_at
    assert JudgeCalibration.objects.count() == 3  # one per kind, never a second row


def test_an_llm_run_is_split_into_chunks_that_other_workers_are_asked_to_help_with(
    domain, two_reviewers_history, fake_llm, settings, broker, django_capture_on_commit_callbacks
):
    settings.LLM_API_KEY = "test-key"
    settings.JUDGE_LLM_CHUNK_CALLS = 5
    rita, _, _ = two_reviewers_history
    config = JudgeConfig.objects.create(
        name="llm",
        kind="personalized",
        backend="openai",
        base_url=fake_llm.base_url,
        model="fake-judge",
        shots=[2],
        seeds=1,
        concurrency=2,
    )
    run = _loo(domain, rita, [config])
    with django_capture_on_commit_callbacks(execute=True):
        assert services.judge_run_execute(run_id=run.id) == "done"
    chunks = list(
        JudgeRunChunk.objects.filter(run=run)
        .order_by("start")  # updated rows come back in no set order
        .values_list("start", "stop", "status")
    )
    assert chunks == [(0, 5, "done"), (5, 10, "done"), (10, 12, "done")]
    assert [m.args for m in broker.sent("judges.judge_run_chunk")] == [[run.id, 1], [run.id, 2]]
    run.refresh_from_db()
    assert run.done == run.total == 12


def test_a_finished_prediction_run_makes_the_decision_board_stale(
    domain, two_reviewers_history, django_capture_on_commit_callbacks
):
    """The decision model weighs predicted scores: it is recomputed after predictions."""
    rita, _, _ = two_reviewers_history
    configs = small_configs()
    run, _ = services.judge_run_request(
        purpose="prediction",
        domain=domain,
        dimensions=["innovativeness"],
        configs=[configs[2]],
        reviewer=rita,
        enqueue=False,
    )
    DecisionSnapshot.objects.all().delete()
    try:
        with django_capture_on_commit_callbacks(execute=True):
            services.judge_run_execute(run_id=run.id)
        assert DecisionSnapshot.objects.filter(status=DecisionSnapshot.Status.QUEUED).count() == 1
    finally:
        purge_queue()


def test_a_local_evaluation_is_stored_calibrated_once_with_the_rows_calibrating_stored_ones_gives(
    domain, two_reviewers_history, monkeypatch
):
    """A local evaluation is one chunk, judged whole, calibrated in memory and written once:
    no second pass over its stored rows, and the same rows as storing each batch and then
    calibrating what was stored (the path of LLM runs, resumed runs and large studies)."""
    from apps.judges.services import chunks, execution

    rita, _, _ = two_reviewers_history
    fields = ("idea_id", "kind", "k", "seed", "score", "raw_confidence", "confidence")
    recalibrated: list[int] = []
    real_calibrate = execution.calibrate_run
    monkeypatch.setattr(
        execution,
        "calibrate_run",
        lambda run, plan: (recalibrated.append(run.id), real_calibrate(run, plan)),
    )
    configs = small_configs()
    whole = _loo(domain, rita, configs)
    assert services.judge_run_execute(run_id=whole.id) == "done"
    assert JudgeRunChunk.objects.filter(run=whole).count() == 1
    assert recalibrated == []
    stored = sorted(JudgePrediction.objects.filter(run=whole).values_list(*fields))
    whole.refresh_from_db()
    assert len(stored) == whole.total == whole.done == 12 * 3  # 12 ratings x 3 configurations
    assert any(raw != confidence for *_, raw, confidence in stored), "calibration changed none"
    fits = sorted(JudgeCalibration.objects.values_list("kind", "n"))

    monkeypatch.setattr(chunks, "WHOLE_MAX_UNITS", 0)
    JudgeCalibration.objects.all().delete()
    batched = _loo(domain, rita, configs)
    assert batched.id != whole.id
    assert services.judge_run_execute(run_id=batched.id) == "done"
    assert recalibrated == [batched.id]
    assert sorted(JudgePrediction.objects.filter(run=batched).values_list(*fields)) == stored
    assert sorted(JudgeCalibration.objects.values_list("kind", "n")) == fits


@pytest.mark.django_db(transaction=True)
def test_a_finished_run_leaves_the_tables_it_grew_analyzed(domain, two_reviewers_history):
    """The alignment snapshot a run queues is planned on statistics that count its rows
    (apps.core.table_statistics), even where autovacuum is off or has not come round yet."""
    rita, otto, _ = two_reviewers_history
    table = JudgePrediction._meta.db_table

    def planned_rows() -> float:
        with connection.cursor() as cur:
            cur.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
            return float(cur.fetchone()[0])

    with connection.cursor() as cur:
        cur.execute(f"ANALYZE {table}")  # the empty table's statistics
    configs = small_configs()
    try:
        assert services.judge_run_execute(run_id=_loo(domain, rita, configs).id) == "done"
        first = JudgePrediction.objects.count()
        # Under autovacuum's threshold (50 rows + 10 % of none): left as they were.
        assert 0 < first <= 50 and planned_rows() == 0
        assert services.judge_run_execute(run_id=_loo(domain, otto, configs).id) == "done"
    finally:
        purge_queue()
    assert JudgePrediction.objects.count() > 50
    assert planned_rows() == JudgePrediction.objects.count()
