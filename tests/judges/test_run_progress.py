"""A finished run's progress reads 100 %: what it counts as total is what it stores."""

from __future__ import annotations

import pytest

from apps.judges import services
from apps.judges.models import JudgeConfig, JudgePrediction
from tests.judges.helpers import small_configs

pytestmark = pytest.mark.django_db


def test_a_finished_study_with_two_configurations_of_one_kind_ends_at_100_percent(
    domain, two_reviewers_history, admin
):
    # "zero_shot" given as a kind selects every active zero-shot configuration: here two, which
    # share each prediction key (kind, k, seed, target) of the run.
    configs = small_configs(seeds=1)
    second = JudgeConfig.objects.create(
        name="zero again", kind="zero_shot", shots=[0], backend="local", seeds=1
    )
    run, _ = services.judge_study_start(
        by=admin,
        domain=domain,
        dimensions=["innovativeness"],
        configs=[*configs, second],
        shots=[0, 2],
        seeds=2,
        enqueue=False,
    )
    services.judge_run_execute(run_id=run.id)
    run.refresh_from_db()

    stored = JudgePrediction.objects.filter(run=run).count()
    assert run.status == "done"
    assert (run.done, run.total, run.percent) == (stored, stored, 100)
