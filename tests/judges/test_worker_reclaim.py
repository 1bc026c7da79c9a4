"""Reliability on real workers: a SIGKILLed worker's run is reclaimed and finished elsewhere.

In its own module so that no other test's worker (tests/conftest.py's module-scoped
`celery_worker`, configured without the fake LLM endpoint) consumes the reclaimed run.
"""

from __future__ import annotations

import pytest

from apps.judges import services
from apps.judges.models import JudgeConfig, JudgeFinal, JudgePrediction, JudgeRun
from apps.judges.tasks import judge_run_execute_task
from tests.judges.helpers import rate
from tests.judges.test_worker import KILL_QUEUE, QueueWorker
from tests.workers import purge_queue, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def _run_done(run_id: int) -> bool:
    return JudgeRun.objects.filter(id=run_id, status="done").exists()


def test_a_sigkilled_workers_run_is_reclaimed_by_beat_and_finished_by_another_worker_on_its_plan(
    transactional_db, two_reviewers_history, domain, fake_llm, tmp_path
):
    purge_queue()
    fake_llm.latency = 0.25
    rita, _, ideas = two_reviewers_history
    config = JudgeConfig.objects.create(
        name="llm-pers",
        kind="personalized",
        backend="openai",
        base_url=fake_llm.base_url,
        model="fake-judge",
        shots=[2],
        seeds=2,
        concurrency=1,
    )
    run, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=[config],
        reviewer=rita,
        enqueue=False,
    )
    # Short lease and reclaim period so the test takes seconds; production: 45 s and 30 s.
    extra_env = {
        "LLM_API_KEY": "test-key",
        "LLM_BASE_URL": fake_llm.base_url,
        "JUDGE_LEASE_SECONDS": "3",
        "JUDGE_RECLAIM_SECONDS": "1",
    }
    first = QueueWorker(queue=KILL_QUEUE, extra_env=extra_env).start()
    try:
        judge_run_execute_task.apply_async((run.id,), queue=KILL_QUEUE)
        wait_for(
            lambda: JudgePrediction.objects.filter(run=run).count() >= 8,
            timeout=60,
            message=first.log()[-3000:],
        )
        # Rita rates one more idea while her run is judged: the run must not pick it up.
        rate(rita, [ideas[12]], "innovativeness", lambda i: 2)
        first.kill()
    finally:
        first.stop()
    run.refresh_from_db()
    assert run.status == "running"
    stored_before = JudgePrediction.objects.filter(run=run).count()
    assert 8 <= stored_before < 24
    calls_before = len(fake_llm.chat_requests)

    # The second worker runs beat (-B): its reclaim job finds the stale heartbeat and re-sends
    # the run; nobody re-enqueues anything by hand.
    second = QueueWorker(
        queue="celery,judges",
        extra_env=extra_env,
        extra_args=("-B", "-s", str(tmp_path / "beat-schedule")),
    ).start()
    try:
        wait_for(lambda: _run_done(run.id), timeout=90, message=second.log()[-3000:])
    finally:
        second.stop()
    # A late duplicate delivery (Redis redelivering the dead worker's message) changes nothing.
    assert services.judge_run_execute(run_id=run.id) == "done"
    run.refresh_from_db()
    keys = list(
        JudgePrediction.objects.filter(run=run).values_list(
            "reviewer_id", "idea_id", "dimension_id", "kind", "k", "seed"
        )
    )
    # The stored plan (12 rated ideas x 2 seeds) was executed, not the 13 ideas rated now.
    assert len(keys) == len(set(keys)) == 24 == run.total == run.done
    assert ideas[12].id not in {k[1] for k in keys}
    assert JudgeFinal.objects.filter(run=run).count() == 12
    assert run.calls == sum(
        JudgePrediction.objects.filter(run=run).values_list("attempts", flat=True)
    )
    # The second worker asked only for what was missing (plus the one lost in flight).
    assert len(fake_llm.chat_requests) - calls_before <= 24 - stored_before + 1
