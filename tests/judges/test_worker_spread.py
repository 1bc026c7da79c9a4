"""Two real workers on one run: its chunks are spread over both, and killing one mid-run loses
nothing (issue 28: more workers make a run faster, separate processes sharing only PostgreSQL
and Redis).

In its own module, like test_worker_reclaim: no other test's worker may consume these tasks.
"""

from __future__ import annotations

import pytest

from apps.judges import services
from apps.judges.models import JudgeConfig, JudgeFinal, JudgePrediction, JudgeRun, JudgeRunChunk
from apps.judges.tasks import judge_run_execute_task
from tests.judges.test_worker import QueueWorker
from tests.workers import purge_queue, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

# Both workers consume the queues the product routes to (the chunk messages go to "judges").
QUEUES = "celery,judges"


def _llm_run(domain, reviewer, fake_llm, *, seeds: int) -> JudgeRun:
    config = JudgeConfig.objects.create(
        name="llm-pers",
        kind="personalized",
        backend="openai",
        base_url=fake_llm.base_url,
        model="fake-judge",
        shots=[2],
        seeds=seeds,
        concurrency=1,
    )
    run, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=[config],
        reviewer=reviewer,
        enqueue=False,
    )
    return run


def _pid(token: str) -> int:
    """The worker process named in a lease token ("<host>:<pid>:<random>")."""
    return int(token.split(":")[1])


def _stored_once(run: JudgeRun) -> list[tuple]:
    keys = list(
        JudgePrediction.objects.filter(run=run).values_list(
            "reviewer_id", "idea_id", "dimension_id", "kind", "k", "seed"
        )
    )
    assert len(keys) == len(set(keys)), "a unit was stored twice"
    return keys


def test_a_runs_chunks_are_spread_over_two_workers(
    transactional_db, two_reviewers_history, domain, fake_llm
):
    purge_queue()
    # Chunks long enough (1 s) that the second worker's first claim, which on a loaded CI
    # machine came after the first worker had judged all twelve 0.2 s chunks, finds work left.
    fake_llm.latency = 0.5
    rita, _, _ = two_reviewers_history
    run = _llm_run(domain, rita, fake_llm, seeds=2)  # 12 rated ideas x 2 seeds = 24 calls
    extra_env = {
        "LLM_API_KEY": "test-key",
        "LLM_BASE_URL": fake_llm.base_url,
        "JUDGE_LLM_CHUNK_CALLS": "2",  # 12 chunks of 2 calls (1 s each)
    }
    first = QueueWorker(queue=QUEUES, extra_env=extra_env).start()
    second = QueueWorker(queue=QUEUES, extra_env=extra_env).start()
    try:
        judge_run_execute_task.apply_async((run.id,))
        wait_for(
            lambda: JudgeRun.objects.filter(id=run.id, status="done").exists(),
            timeout=90,
            message=first.log()[-2000:] + second.log()[-2000:],
        )
    finally:
        first.stop()
        second.stop()
    chunks = list(JudgeRunChunk.objects.filter(run=run).values_list("status", "lease_token"))
    assert len(chunks) == 12 and {s for s, _ in chunks} == {"done"}
    by_worker = {
        pid: sum(_pid(t) == pid for _, t in chunks) for pid in {_pid(t) for _, t in chunks}
    }
    # Every chunk was judged by one of the two workers, and each of them judged some.
    assert set(by_worker) == {first.process.pid, second.process.pid}, by_worker
    assert min(by_worker.values()) >= 2, by_worker
    run.refresh_from_db()
    assert len(_stored_once(run)) == 24 == run.total == run.done
    assert JudgeFinal.objects.filter(run=run).count() == 12


def test_with_two_workers_one_killed_mid_run_the_other_finishes_it_and_nothing_is_lost(
    transactional_db, two_reviewers_history, domain, fake_llm, tmp_path
):
    purge_queue()
    fake_llm.latency = 0.25
    rita, _, _ = two_reviewers_history
    run = _llm_run(domain, rita, fake_llm, seeds=2)
    # Short lease and reclaim period so the test takes seconds; production: 45 s and 30 s.
    extra_env = {
        "LLM_API_KEY": "test-key",
        "LLM_BASE_URL": fake_llm.base_url,
        "JUDGE_LLM_CHUNK_CALLS": "4",  # 6 chunks of 4 calls (1 s each)
        "JUDGE_LEASE_SECONDS": "3",
        "JUDGE_RECLAIM_SECONDS": "1",
    }
    doomed = QueueWorker(queue=QUEUES, extra_env=extra_env).start()
    # The survivor runs beat (-B): its reclaim job resends the run once the dead lease expires.
    survivor = QueueWorker(
        queue=QUEUES, extra_env=extra_env, extra_args=("-B", "-s", str(tmp_path / "beat"))
    ).start()
    try:
        judge_run_execute_task.apply_async((run.id,))

        def doomed_holds_a_chunk() -> bool:
            return any(
                _pid(t) == doomed.process.pid
                for t in JudgeRunChunk.objects.filter(run=run, status="running").values_list(
                    "lease_token", flat=True
                )
            )

        wait_for(doomed_holds_a_chunk, timeout=60, message=doomed.log()[-3000:])
        doomed.kill()
        wait_for(
            lambda: JudgeRun.objects.filter(id=run.id, status="done").exists(),
            timeout=120,
            message=survivor.log()[-3000:],
        )
    finally:
        doomed.stop()
        survivor.stop()
    run.refresh_from_db()
    assert len(_stored_once(run)) == 24 == run.total == run.done
    assert JudgeFinal.objects.filter(run=run).count() == 12
    # The chunk the killed worker held was finished by the survivor.
    tokens = JudgeRunChunk.objects.filter(run=run).values_list("status", "lease_token")
    assert {s for s, _ in tokens} == {"done"}
    assert any(_pid(t) == survivor.process.pid for _, t in tokens)
