"""The judge pipeline on a real Celery worker and Redis: trigger, execute, crash, resume."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection
from django.urls import reverse

from apps.judges.models import (
    AlignmentSnapshot,
    JudgeConfig,
    JudgeFinal,
    JudgePrediction,
    JudgeRun,
)
from apps.judges.tasks import judge_run_execute_task
from apps.screening.services.ratings import rating_submit
from tests import workers
from tests.judges.helpers import make_ideas, reviewer_with_assignments
from tests.workers import ROOT, CeleryWorker, wait_for

# serialized_rollback: the flush after a transactional test would otherwise remove the PBIG
# rubric that a migration loads, for every test after it.
pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

KILL_QUEUE = "judges-kill-test"


class QueueWorker(CeleryWorker):
    """A worker consuming only its own queue, so the session worker cannot take its tasks."""

    def __init__(self, *, queue: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.queue = queue

    def start(self, timeout: float = 30.0) -> QueueWorker:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": workers.test_database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            **self.extra_env,
        }
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--pool=solo",
                "--concurrency=1",
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-Q",
                self.queue,
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        wait_for(
            lambda: "ready." in self.log() or self.process.poll() is not None,
            timeout=timeout,
            message="worker did not start",
        )
        if self.process.poll() is not None:
            raise RuntimeError(self.log())
        return self


def _run_done(run_id: int) -> bool:
    return JudgeRun.objects.filter(id=run_id, status="done").exists()


def test_ratings_crossing_the_threshold_build_judges_on_the_worker_and_the_dashboard_shows_them(
    transactional_db, celery_worker, domain, client, manager, settings
):
    settings.JUDGE_DEBOUNCE_SECONDS = 0
    settings.ALIGNMENT_DEBOUNCE_SECONDS = 0
    JudgeConfig.objects.create(
        name="zero", kind="zero_shot", backend="local", shots=[0], seeds=1, min_history=4
    )
    JudgeConfig.objects.create(
        name="agg", kind="aggregate", backend="local", shots=[1, 2], seeds=1, min_history=4
    )
    JudgeConfig.objects.create(
        name="pers", kind="personalized", backend="local", shots=[1, 2], seeds=2, min_history=4
    )
    ideas = make_ideas(domain, 7)
    rita = reviewer_with_assignments(domain, "rita", ideas)
    otto = reviewer_with_assignments(domain, "otto", ideas)
    # Specificity 1 or 2 closes every later stage, so only specificity is scored.
    for i, idea in enumerate(ideas[:5]):
        rating_submit(reviewer=otto, idea=idea, scores={"specificity": 2 - i % 2})
    for i, idea in enumerate(ideas[:3]):
        rating_submit(reviewer=rita, idea=idea, scores={"specificity": 1 + i % 2})
    wait_for(
        lambda: JudgeRun.objects.filter(
            reviewer=otto, purpose="loo_evaluation", status="done"
        ).exists(),
        timeout=60,
        message=celery_worker.log()[-3000:],
    )
    assert not JudgeRun.objects.filter(reviewer=rita).exists(), "Rita has 3 ratings, fewer than 4"

    rating_submit(reviewer=rita, idea=ideas[3], scores={"specificity": 2})
    wait_for(
        lambda: JudgeRun.objects.filter(reviewer=rita, status="done").count() == 2,
        timeout=60,
        message=celery_worker.log()[-3000:],
    )
    loo = JudgeRun.objects.get(reviewer=rita, purpose="loo_evaluation")
    assert loo.dimensions == ["specificity"]
    # 4 targets x (1 zero-shot + 2 aggregate k + 2 personalized k x 2 seeds)
    assert loo.total == loo.done == 4 * (1 + 2 + 4)
    assert JudgeFinal.objects.filter(run=loo).count() == 4 * 5
    prediction = JudgeRun.objects.get(reviewer=rita, purpose="prediction")
    assert set(JudgeFinal.objects.filter(run=prediction).values_list("idea_id", flat=True)) == {
        ideas[4].id,
        ideas[5].id,
        ideas[6].id,
    }

    # The dashboard reads the alignment snapshot the worker stores after the runs finished.
    wait_for(
        lambda: AlignmentSnapshot.objects.filter(
            scope="auto", status="done", run_ids__contains=[loo.id]
        ).exists(),
        timeout=60,
        message=celery_worker.log()[-3000:],
    )
    client.force_login(manager)
    page = client.get(reverse("judges:alignment")).content.decode()
    assert 'data-judge-chart="jg-data-all-specificity"' in page
    assert "No judge predictions yet" not in page
    assert (
        ideas[5].title
        in client.get(reverse("judges:predictions"), {"reviewer": "rita"}).content.decode()
    )


def test_a_worker_killed_mid_run_leaves_a_run_that_a_retried_task_completes_without_duplicates(
    transactional_db, two_reviewers_history, domain, fake_llm
):
    fake_llm.latency = 0.25
    rita, _, _ = two_reviewers_history
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
    from apps.judges import services

    run, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=[config],
        reviewer=rita,
        enqueue=False,
    )
    extra_env = {"LLM_API_KEY": "test-key", "LLM_BASE_URL": fake_llm.base_url}
    first = QueueWorker(queue=KILL_QUEUE, extra_env=extra_env).start()
    try:
        judge_run_execute_task.apply_async((run.id,), queue=KILL_QUEUE)
        # 24 targets in chunks of 16: kill once the first chunk is stored, the second in flight.
        wait_for(
            lambda: JudgePrediction.objects.filter(run=run).count() >= 16,
            timeout=60,
            message=first.log()[-3000:],
        )
        wait_for(lambda: len(fake_llm.chat_requests) > 17, timeout=30)
        first.kill()
    finally:
        first.stop()
    run.refresh_from_db()
    assert run.status == "running"
    stored_before = JudgePrediction.objects.filter(run=run).count()
    assert 16 <= stored_before < 24

    second = QueueWorker(queue=KILL_QUEUE, extra_env=extra_env).start()
    try:
        # Redis would redeliver the unacked message only after its visibility timeout: re-enqueue,
        # as an operator (or a beat job) would. Twice, to show a duplicate delivery is harmless.
        judge_run_execute_task.apply_async((run.id,), queue=KILL_QUEUE)
        judge_run_execute_task.apply_async((run.id,), queue=KILL_QUEUE)
        wait_for(lambda: _run_done(run.id), timeout=90, message=second.log()[-3000:])
        wait_for(
            lambda: second.log().count("succeeded") >= 2, timeout=30, message=second.log()[-3000:]
        )
    finally:
        second.stop()
    run.refresh_from_db()
    keys = list(
        JudgePrediction.objects.filter(run=run).values_list(
            "reviewer_id", "idea_id", "dimension_id", "kind", "k", "seed"
        )
    )
    assert len(keys) == len(set(keys)) == 24 == run.total == run.done
    assert JudgeFinal.objects.filter(run=run).count() == 12
    assert run.calls == sum(
        JudgePrediction.objects.filter(run=run).values_list("attempts", flat=True)
    )
    assert all(p.backend == "openai" and p.model for p in JudgePrediction.objects.filter(run=run))
    # the resumed worker asked only for what was missing (plus the ones lost in flight)
    assert len(fake_llm.chat_requests) <= 24 + 16
    with connection.cursor() as cur:  # the advisory lock was released
        # pg_locks spans the cluster: count only this database's locks (not a parallel run's).
        cur.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 8808 "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        )
        assert cur.fetchone()[0] == 0
