"""A write storm is not a task storm (issue 9.7): a real worker, a burst of rating writes."""

from __future__ import annotations

import math
import re
import time

import pytest

from apps.judges.models import JudgeConfig, JudgeRun, JudgeScheduleRequest
from apps.screening.services.ratings import rating_submit
from tests.judges.helpers import make_ideas, reviewer_with_assignments
from tests.workers import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def test_a_burst_of_200_rating_writes_sends_one_scheduling_task_per_reviewer(
    transactional_db, celery_worker, domain, settings
):
    debounce = 10
    settings.JUDGE_DEBOUNCE_SECONDS = debounce
    JudgeConfig.objects.create(
        name="pers", kind="personalized", backend="local", shots=[2], seeds=1, min_history=3
    )
    ideas = make_ideas(domain, 10)
    reviewers = [reviewer_with_assignments(domain, f"storm{i}", ideas) for i in range(4)]
    writes = 0
    started = time.monotonic()
    for round_ in range(5):
        for reviewer in reviewers:
            for i, idea in enumerate(ideas):
                # Specificity 1 or 2 closes the later stages: one scored dimension per rating.
                rating_submit(
                    reviewer=reviewer, idea=idea, scores={"specificity": 1 + (i + round_) % 2}
                )
                writes += 1
    assert writes == 200
    burst = time.monotonic() - started
    assert JudgeScheduleRequest.objects.filter(status="queued").count() <= len(reviewers)

    def settled() -> bool:
        judged = JudgeRun.objects.filter(purpose="loo_evaluation", status="done")
        # Every run the burst led to has finished too (the predictions after each
        # evaluation): the worker writes nothing once the test has ended.
        return (
            judged.values("reviewer_id").distinct().count() == len(reviewers)
            and not JudgeScheduleRequest.objects.exists()
            and not JudgeRun.objects.filter(status__in=JudgeRun.ACTIVE).exists()
        )

    wait_for(settled, timeout=180, message="the scheduling did not settle")
    received = re.findall(
        r"Task judges\.judge_runs_schedule\[[^\]]+\] received", celery_worker.log()
    )
    # One pending task per reviewer per debounce window: a burst longer than the window (a slow
    # machine) may need one more window per reviewer, never one task per write.
    windows = math.ceil(burst / debounce) + 1
    assert len(reviewers) <= len(received) <= len(reviewers) * windows, (
        f"{len(received)} scheduling tasks for {writes} writes in {burst:.1f} s"
    )
