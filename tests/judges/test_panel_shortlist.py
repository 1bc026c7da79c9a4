"""The domain's panel shortlist through real prediction runs: stored when the last prediction
run of the domain finishes, at most N ideas per list in order, in the shortlists CSV with an
empty reviewer, shown to managers on /judges/predictions/, never to reviewers."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from apps.judges import selectors, services
from apps.judges.models import JudgeFinal, JudgeRun, PanelShortlist
from apps.judges.services.shortlists import panel_shortlist_after_run, panel_shortlist_store
from tests.factories import ReviewerFactory
from tests.judges.helpers import make_ideas, rate, small_configs

pytestmark = pytest.mark.django_db


@pytest.fixture
def panel_world(domain, settings):
    """Three reviewers who each scored the first 16 of 30 ideas; two more (Dora, Eve) scored
    all 30, so the other 14 are unread by three reviewers and read by two: panel-shortlist
    material (the three reviewers' judges predict them from Dora's and Eve's scores)."""
    settings.JUDGE_SHORTLIST_SIZE = 4
    ideas = make_ideas(domain, 30)
    reviewers = [
        ReviewerFactory(username=name, first_name=name.title(), profile=[domain])
        for name in ("ria", "oli", "ulf")
    ]
    panel = [
        ReviewerFactory(username=name, first_name=name.title(), profile=[domain])
        for name in ("dora", "eve")
    ]
    for n, r in enumerate(reviewers):
        rate(r, ideas[:16], "innovativeness", lambda i, n=n: 1 + n // 2 + (i % 4) // 2)
    for r in panel:
        rate(r, ideas, "innovativeness", lambda i: 2 + (i % 4))
    config = small_configs(seeds=1)[2]
    return reviewers, panel, ideas, config


@pytest.fixture
def execute(django_capture_on_commit_callbacks):
    """Execute a run as a worker would, its after-commit hooks included (the test's own
    transaction never commits)."""

    def _execute(run):
        with django_capture_on_commit_callbacks(execute=True):
            services.judge_run_execute(run_id=run.id)

    return _execute


def _predict(domain, reviewer, config, execute=None):
    run, _ = services.judge_run_request(
        purpose="prediction",
        domain=domain,
        dimensions=["innovativeness"],
        configs=[config],
        reviewer=reviewer,
        enqueue=False,
    )
    if execute is not None:
        execute(run)
    return run


def test_the_last_prediction_run_of_the_domain_stores_the_panel_lists_in_order(
    domain, panel_world, execute
):
    reviewers, _, ideas, config = panel_world
    runs = [_predict(domain, r, config) for r in reviewers]
    for run in runs[:2]:
        execute(run)
    # A prediction run of the domain is still queued: nothing stored yet (the last one will).
    assert not PanelShortlist.objects.exists()
    execute(runs[2])
    per_dim = list(selectors.panel_shortlist_for(domain=domain, dimension="innovativeness"))
    overall = list(selectors.panel_shortlist_for(domain=domain, dimension=selectors.ALL_DIMENSIONS))
    assert [e.rank for e in per_dim] == [1, 2, 3, 4] and len(overall) == 4
    keys = [(-e.predicted_score, -(e.confidence or 0), e.idea_id) for e in per_dim]
    assert keys == sorted(keys)
    # Each entry is the mean of the three reviewers' stored predictions of an unread idea.
    unread = {i.id for i in ideas[16:]}
    for e in per_dim:
        assert e.idea_id in unread and e.panel_size == 3
        scores = JudgeFinal.objects.filter(
            run__in=runs, idea_id=e.idea_id, kind="personalized"
        ).values_list("score", flat=True)
        assert e.predicted_score == pytest.approx(sum(scores) / 3, abs=1e-4)
    # Recomputing replaces the domain's lists; a run with others still active skips.
    assert panel_shortlist_store(domain=domain) == 8
    assert PanelShortlist.objects.filter(domain=domain).count() == 8
    queued = _predict(domain, reviewers[0], config)
    assert panel_shortlist_after_run(runs[0]) is None
    JudgeRun.objects.filter(id=queued.id).delete()
    assert panel_shortlist_after_run(runs[0]) == 8


def test_the_csv_has_the_panel_rows_with_an_empty_reviewer_and_managers_see_them(
    client, manager, reviewer, domain, panel_world, execute
):
    reviewers, _, _, config = panel_world
    for r in reviewers:
        _predict(domain, r, config, execute)
    client.force_login(manager)
    response = client.get(reverse("judges:alignment_csv", args=["shortlists"]))
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
    panel = [r for r in rows[1:] if r[0] == ""]
    assert len(panel) == 8 and {r[2] for r in panel} == {"", "innovativeness"}
    assert {r[0] for r in rows[1:]} == {"", "ria", "oli", "ulf"}
    page = client.get(reverse("judges:predictions")).content.decode()
    assert 'id="panel-shortlist-table"' in page and "Panel shortlists, per domain" in page
    # Filtered to one reviewer, the page shows that reviewer's lists only.
    one = client.get(reverse("judges:predictions"), {"reviewer": "ria"}).content.decode()
    assert 'id="panel-shortlist-table"' not in one
    # Reviewers see neither the page nor the export (it averages others' predictions).
    client.force_login(reviewer)
    assert client.get(reverse("judges:predictions")).status_code == 403
    assert client.get(reverse("judges:alignment_csv", args=["shortlists"])).status_code == 403
    mine = client.get(reverse("judges:me")).content.decode()
    assert "Panel shortlists" not in mine


def test_a_restore_rebuilds_the_panel_lists_from_the_finished_runs(domain, panel_world, execute):
    reviewers, _, _, config = panel_world
    for r in reviewers:
        _predict(domain, r, config, execute)
    before = list(PanelShortlist.objects.values_list("dimension_id", "rank", "idea_id"))
    PanelShortlist.objects.all().delete()
    services.judge_shortlists_rebuild()
    after = list(PanelShortlist.objects.values_list("dimension_id", "rank", "idea_id"))
    assert sorted(after, key=str) == sorted(before, key=str) and len(after) == 8


@pytest.mark.parametrize("panel_evidence", [False, True])
def test_an_llm_run_sends_panel_evidence_only_when_its_configuration_asks(
    domain, panel_world, fake_llm, panel_evidence
):
    from apps.judges.models import JudgeConfig

    reviewers, _, ideas, _ = panel_world
    config = JudgeConfig.objects.create(
        name="llm-pers",
        kind="personalized",
        backend="openai",
        base_url=fake_llm.base_url,
        shots=[2],
        seeds=1,
        panel_evidence=panel_evidence,
    )
    run, _ = services.judge_run_request(
        purpose="prediction",
        domain=domain,
        dimensions=["innovativeness"],
        configs=[config],
        reviewer=reviewers[0],
        enqueue=False,
    )
    services.judge_run_execute(run_id=run.id)
    prompts = [r["messages"][-1]["content"] for r in fake_llm.chat_requests]
    assert len(prompts) == 14  # the unread ideas
    with_evidence = [p for p in prompts if "## What other reviewers gave this idea" in p]
    assert len(with_evidence) == (14 if panel_evidence else 0)
    # Only Dora and Eve scored these ideas: the target reviewer is never among them.
    assert all("2 other reviewers scored this idea" in p for p in with_evidence)
