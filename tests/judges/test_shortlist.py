"""The panel judge in runs and the real shortlist: signals stored, the target's own scores
never used, at most N ideas per reviewer in order, the shortlist export's columns."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from apps.judges import selectors, services
from apps.judges.engine.shortlist import Candidate, shortlists
from apps.judges.models import JudgeFinal, JudgePrediction, JudgeShortlist
from apps.screening.models import Rating
from tests.factories import ReviewerFactory
from tests.judges.helpers import make_ideas, rate, small_configs


def _c(idea, score, conf, dim=1, signal="panel", lo=1, hi=5):
    return Candidate(idea, dim, score, conf, signal, 2, lo, hi)


def test_a_shortlist_keeps_the_top_n_by_score_then_confidence_and_skips_missing_scores():
    cands = [_c(1, 3, 50), _c(2, 5, 40), _c(3, 5, 90), _c(4, None, None), _c(5, 4, 10)]
    per_dim = [e for e in shortlists(cands, size=3) if e.dimension_id == 1]
    assert [(e.rank, e.idea_id) for e in per_dim] == [(1, 3), (2, 2), (3, 5)]
    assert all(e.idea_id != 4 for e in shortlists(cands, size=10))


def test_the_all_dimensions_list_ranks_by_mean_position_on_the_scales():
    cands = [
        _c(1, 5, 50, dim=1),  # top of 1-5
        _c(1, 0, 50, dim=2, lo=0, hi=3),  # bottom of 0-3: mean 0.5
        _c(2, 4, 50, dim=1),  # 0.75
        _c(2, 2, 50, dim=2, lo=0, hi=3),  # 0.667: mean 0.708
    ]
    overall = [e for e in shortlists(cands, size=5) if e.dimension_id is None]
    assert [e.idea_id for e in overall] == [2, 1]
    assert overall[0].predicted_score == pytest.approx((0.75 + 2 / 3) / 2, abs=1e-4)


@pytest.fixture
def panel_domain(domain):
    """Three reviewers who rated the same 16 ideas (Rita strict, Otto and Uma lenient, all in
    the same order), and Rita left 14 more ideas unrated that Otto and Uma scored."""
    ideas = make_ideas(domain, 30)
    rita = ReviewerFactory(username="rita", first_name="Rita", profile=[domain])
    otto = ReviewerFactory(username="otto", first_name="Otto", profile=[domain])
    uma = ReviewerFactory(username="uma", first_name="Uma", profile=[domain])
    rate(rita, ideas[:16], "innovativeness", lambda i: 1 + (i % 4) // 2)
    rate(otto, ideas, "innovativeness", lambda i: 3 + (i % 4) // 2)
    rate(uma, ideas, "innovativeness", lambda i: 3 + (i % 4) // 2)
    return rita, otto, uma, ideas


@pytest.mark.django_db
def test_evaluation_predictions_come_from_the_panel_and_never_from_the_targets_own_scores(
    domain, panel_domain
):
    rita, _, _, ideas = panel_domain
    configs = small_configs(seeds=1)

    def evaluate():
        run, _ = services.judge_run_request(
            purpose="loo_evaluation",
            domain=domain,
            dimensions=["innovativeness"],
            configs=configs,
            reviewer=rita,
            enqueue=False,
        )
        services.judge_run_execute(run_id=run.id)
        return {
            p.idea_id: (p.score, p.signal, p.panel_size, p.reason)
            for p in JudgePrediction.objects.filter(
                run=run, reviewer=rita, kind="personalized", idea=ideas[5]
            )
        }

    first = evaluate()
    assert first[ideas[5].id][1:3] == ("panel", 2)
    # Rita's own score on the target (and her score on another dimension of it) change: a judge
    # that read them would change its prediction for this target.
    Rating.objects.filter(reviewer=rita, idea=ideas[5]).update(score=4)
    rate(rita, [ideas[5]], "specificity", lambda i: 4)
    assert evaluate() == first


@pytest.mark.django_db
def test_a_prediction_run_stores_at_most_n_ideas_per_list_in_order_with_their_signal(
    client, manager, domain, panel_domain, settings
):
    settings.JUDGE_SHORTLIST_SIZE = 5
    rita, _, _, ideas = panel_domain
    config = small_configs(seeds=1)[2]
    run, _ = services.judge_run_request(
        purpose="prediction",
        domain=domain,
        dimensions=["innovativeness"],
        configs=[config],
        reviewer=rita,
        enqueue=False,
    )
    services.judge_run_execute(run_id=run.id)
    finals = JudgeFinal.objects.filter(run=run)
    assert finals.count() == 14 and {f.signal for f in finals} == {"panel"}
    entries = list(selectors.shortlist_for(reviewer_id=rita.id))
    per_dim = [e for e in entries if e.dimension_id is not None]
    overall = [e for e in entries if e.dimension_id is None]
    assert [e.rank for e in per_dim] == [1, 2, 3, 4, 5] and len(overall) == 5
    keys = [(-e.predicted_score, -(e.confidence or 0), e.idea_id) for e in per_dim]
    assert keys == sorted(keys)
    # The top five are the ideas the panel scored highest, mapped onto Rita's strict scale.
    assert {e.idea.id for e in per_dim} <= {i.id for n, i in enumerate(ideas) if n % 4 >= 2}
    # The panel gave these 4; on Rita's 1-2 scale (two examples: level and spread uncertain)
    # they land at 2, or 3 when both examples were her 2s.
    assert all(e.predicted_score <= 3 for e in per_dim)
    assert JudgeShortlist.objects.count() == 10

    client.force_login(manager)
    page = client.get(reverse("judges:predictions")).content.decode()
    assert "All dimensions" in page and "2 others" in page
    response = client.get(reverse("judges:alignment_csv", args=["shortlists"]))
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == [
        "reviewer",
        "domain",
        "dimension",
        "idea",
        "title",
        "rank",
        "predicted_score",
        "confidence",
        "signal",
    ]
    assert len(rows) == 11
    assert {r[2] for r in rows[1:]} == {"", "innovativeness"}
    assert {r[8] for r in rows[1:]} == {"panel"}


@pytest.mark.django_db
def test_a_text_only_study_uses_no_panel(domain, panel_domain):
    configs = small_configs(seeds=1)
    run, _ = services.judge_study_start(
        by=None,
        domain=domain,
        dimensions=["innovativeness"],
        configs=configs[1:],
        shots=[2],
        seeds=1,
        enqueue=False,
        signals="text",
    )
    services.judge_run_execute(run_id=run.id)
    signals = set(JudgePrediction.objects.filter(run=run).values_list("signal", flat=True))
    assert signals and "panel" not in signals


@pytest.fixture
def two_dimensions(panel_domain):
    """panel_domain with specificity scored too; (Rita, the ideas, a personalized config)."""
    rita, otto, uma, ideas = panel_domain
    rate(rita, ideas[:16], "specificity", lambda i: 1 + i % 4)
    rate(otto, ideas, "specificity", lambda i: 1 + (3 * i) % 4)
    rate(uma, ideas, "specificity", lambda i: 1 + (3 * i) % 4)
    return rita, ideas, small_configs(seeds=1)[2]


@pytest.mark.django_db
def test_the_all_dimensions_list_combines_the_prediction_runs_of_every_dimension(
    domain, two_dimensions, settings
):
    settings.JUDGE_SHORTLIST_SIZE = 4
    rita, ideas, config = two_dimensions
    for dim in ("innovativeness", "specificity"):  # one run per dimension (as before 2026-11-28)
        run, _ = services.judge_run_request(
            purpose="prediction",
            domain=domain,
            dimensions=[dim],
            configs=[config],
            reviewer=rita,
            enqueue=False,
        )
        services.judge_run_execute(run_id=run.id)
    overall = list(selectors.shortlist_for(reviewer_id=rita.id, dimension=selectors.ALL_DIMENSIONS))
    assert [e.rank for e in overall] == [1, 2, 3, 4]
    assert overall[0].run_id == run.id  # stored with the newest run, the earlier list replaced
    # Each entry's score is its mean position over both dimensions' predictions.
    finals = {
        (f.idea_id, f.dimension.key): f.score
        for f in JudgeFinal.objects.filter(run__purpose="prediction").select_related("dimension")
    }
    for e in overall:
        positions = [
            (finals[(e.idea_id, d)] - 1) / 4
            if d == "innovativeness"
            else (finals[(e.idea_id, d)] - 1) / 3
            for d in ("innovativeness", "specificity")
        ]
        assert e.predicted_score == pytest.approx(sum(positions) / 2, abs=1e-4)
    per_dim = selectors.shortlist_for(reviewer_id=rita.id).filter(dimension__isnull=False)
    assert per_dim.count() == 8


@pytest.mark.django_db
def test_a_run_over_both_dimensions_supersedes_the_earlier_per_dimension_runs(
    domain, two_dimensions, settings
):
    # Automatic runs were one per dimension; an installation that upgrades keeps those runs,
    # and the first run over both dimensions must replace them everywhere, not add to them.
    settings.JUDGE_SHORTLIST_SIZE = 4
    rita, ideas, config = two_dimensions

    def predict(dims):
        run, _ = services.judge_run_request(
            purpose="prediction",
            domain=domain,
            dimensions=dims,
            configs=[config],
            reviewer=rita,
            enqueue=False,
        )
        services.judge_run_execute(run_id=run.id)
        return run

    old = [predict([d]) for d in ("innovativeness", "specificity")]
    both = predict(["innovativeness", "specificity"])

    current = selectors.latest_done_runs(purpose="prediction", reviewer_id=rita.id)
    assert current == [both.id] and all(r.id not in current for r in old)
    finals = selectors.unrated_predictions(reviewer_id=rita.id)
    assert {f.run_id for f in finals} == {both.id}
    assert finals.count() == 2 * 14  # one per unread idea and dimension: nothing twice
    overall = list(selectors.shortlist_for(reviewer_id=rita.id, dimension=selectors.ALL_DIMENSIONS))
    assert [(e.rank, e.run_id) for e in overall] == [(n, both.id) for n in (1, 2, 3, 4)]
    per_dim = selectors.shortlist_for(reviewer_id=rita.id).filter(dimension__isnull=False)
    assert {e.run_id for e in per_dim} == {both.id} and per_dim.count() == 2 * 4
