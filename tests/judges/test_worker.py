"""The judge pipeline on a real Celery worker and Redis: trigger, execute, crash, resume."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.urls import reverse

from apps.judges.models import (
    AlignmentSnapshot,
    JudgeConfig,
    JudgeFinal,
    JudgeRun,
)
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

    def __init__(self, *, queue: str, extra_args: tuple[str, ...] = (), **kwargs) -> None:
        super().__init__(**kwargs)
        self.queue = queue
        self.extra_args = extra_args

    def start(self, timeout: float = 30.0) -> QueueWorker:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": workers.worker_database_url(),
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
                *self.extra_args,
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
    # Threshold 0 keeps every prediction: which few-shot examples a target gets is a hash of the
    # rating ids (apps/judges/engine/examples.py), so with the default threshold of 80 whether any
    # of these few predictions survives calibration depended on how many ratings earlier tests had
    # created, and the chart below came and went with the test order.
    common = {"backend": "local", "min_history": 4, "confidence_threshold": 0}
    JudgeConfig.objects.create(name="zero", kind="zero_shot", shots=[0], seeds=1, **common)
    JudgeConfig.objects.create(name="agg", kind="aggregate", shots=[1, 2], seeds=1, **common)
    JudgeConfig.objects.create(name="pers", kind="personalized", shots=[1, 2], seeds=2, **common)
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
