"""On the demo data (planted reviewer-specific scales), personalized judges beat aggregate ones.

The local baseline backend is used: it is a similarity-weighted vote over the examples, so the
advantage comes only from where the examples come from, which is exactly what the study compares.
"""

from __future__ import annotations

import pytest

from apps.catalog.models import Domain
from apps.judges import selectors, services
from apps.judges.backends.local import RECOMMENDED_THRESHOLD
from apps.judges.models import JudgeConfig

pytestmark = pytest.mark.django_db

PLANTED = ["innovativeness", "competitive_advantage", "need_validity", "market_size"]


def test_personalized_judges_agree_with_their_reviewers_better_than_aggregate_ones_on_the_demo(
    settings,
):
    from apps.demo.generator import PLANTED as GENERATOR_PLANTED
    from apps.demo.services import demo_load

    assert set(GENERATOR_PLANTED) == set(PLANTED)
    settings.LLM_BASE_URL = ""
    demo_load(seed=0, scale=0.5)
    domain = Domain.objects.order_by("key").first()
    configs = [
        JudgeConfig.objects.create(
            name="agg",
            kind="aggregate",
            backend="local",
            shots=[9],
            seeds=1,
            confidence_threshold=RECOMMENDED_THRESHOLD,
        ),
        JudgeConfig.objects.create(
            name="pers",
            kind="personalized",
            backend="local",
            shots=[9],
            seeds=1,
            confidence_threshold=RECOMMENDED_THRESHOLD,
        ),
    ]
    run, _ = services.judge_study_start(
        by=None,
        domain=domain,
        dimensions=PLANTED,
        configs=configs,
        shots=[9],
        seeds=1,
        min_history=8,
        enqueue=False,
    )
    assert services.judge_run_execute(run_id=run.id) == "done"
    report = selectors.alignment_report(run_ids=[run.id], with_reasoning=False)
    alpha = {(r["kind"], r["dimension"]): r["alpha"] for r in report["curve"]}
    print({d: (alpha[("aggregate", d)], alpha[("personalized", d)]) for d in PLANTED})
    wins = [
        d for d in PLANTED if (alpha[("personalized", d)] or -1) > (alpha[("aggregate", d)] or -1)
    ]
    assert len(wins) >= 3, alpha
    assert sum(alpha[("personalized", d)] for d in PLANTED) > sum(
        alpha[("aggregate", d)] or 0 for d in PLANTED
    )
