"""The stored snapshot, the blindness rule per role, the API, the pages and the command,
against the database."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from apps.findings.models import FindingSlice, FindingSnapshot, scope_key
from apps.findings.selectors import unsaturated_idea_ids
from apps.findings.services import findings_recompute
from apps.screening.services.ratings import rating_submit

RITA_SAYS = "The pricing model ignores hospital budgets. Setup needs a data engineer on site."
OTTO_SAYS = "Hospital budgets do not fit the pricing model."


@pytest.fixture
def rated(reviewer, other_reviewer, idea):
    rating_submit(
        reviewer=reviewer,
        idea=idea,
        scores={"specificity": 1},
        rationales={"specificity": RITA_SAYS},
    )
    rating_submit(
        reviewer=other_reviewer,
        idea=idea,
        scores={"specificity": 2},
        rationales={"specificity": OTTO_SAYS},
    )
    return idea


@pytest.fixture
def snapshot(rated) -> FindingSnapshot:
    row = FindingSnapshot.objects.create(scope=scope_key(threshold=0.5), threshold=0.5)
    done = findings_recompute(snapshot_id=row.id)
    assert done.status == FindingSnapshot.Status.DONE, done.error
    return done


def test_the_recompute_stores_the_idea_findings_and_a_second_run_changes_nothing(snapshot, idea):
    section = FindingSlice.objects.get(snapshot=snapshot, source="reviewers").ideas[str(idea.pk)]
    assert (section["n_rationales"], section["n_units"], section["n_findings"]) == (2, 3, 2)
    assert sorted(len(f["members"]) for f in section["findings"]) == [1, 2]
    again = findings_recompute(snapshot_id=snapshot.id)
    assert again.computed_at == snapshot.computed_at
    assert FindingSlice.objects.filter(snapshot=snapshot).count() == 1


def test_a_manager_sees_every_finding_with_who_raised_it(snapshot, idea, manager, reviewer):
    client = APIClient()
    client.force_login(manager)
    body = client.get(f"/api/ideas/{idea.pk}/findings/").json()
    assert body["n_findings"] == 2 and "chao2" in body
    members = {m for f in body["findings"] for m in f["members"]}
    assert members == {
        str(reviewer.pk),
        str(idea.assignments.exclude(reviewer=reviewer).get().reviewer_id),
    }


def test_a_reviewer_sees_only_their_own_findings_and_no_counts_of_others(
    snapshot, idea, reviewer, other_reviewer
):
    client = APIClient()
    client.force_login(other_reviewer)
    body = client.get(f"/api/ideas/{idea.pk}/findings/").json()
    assert body["blind"] is True and "chao2" not in body and "n_reviewers" not in body
    assert [f["name"] for f in body["findings"]] == [OTTO_SAYS]
    assert all(f["members"] == [str(other_reviewer.pk)] for f in body["findings"])
    assert RITA_SAYS.split(".")[0] not in json.dumps(body)


def test_an_outsider_gets_404_for_an_idea_they_cannot_see(snapshot, idea, outsider):
    client = APIClient()
    client.force_login(outsider)
    assert client.get(f"/api/ideas/{idea.pk}/findings/").status_code == 404


def test_the_domain_api_answers_every_scope_with_the_commands_fields(snapshot, manager, idea):
    client = APIClient()
    client.force_login(manager)
    key = idea.patent.domain.key
    body = client.get(f"/api/findings/?domain={key}").json()
    scopes = {s["scope"]: s for s in body["scopes"]}
    assert {f"domain:{key}", f"idea:{idea.pk}", f"dimension:{key}/specificity"} <= set(scopes)
    idea_scope = scopes[f"idea:{idea.pk}"]
    assert set(idea_scope["expected_new"]) == {"1", "2", "5"}
    assert idea_scope["curve"][0]["reviewers"] == 1
    bad = client.get("/api/findings/?domain=nope")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "domain"


def test_a_bad_threshold_is_refused_naming_the_field(manager, db):
    client = APIClient()
    client.force_login(manager)
    response = client.post("/api/findings/recompute/", {"threshold": 7}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "threshold"


def test_the_page_and_the_idea_page_show_the_findings_to_a_manager(snapshot, manager, idea):
    client = Client()
    client.force_login(manager)
    page = client.get(reverse("findings:overview") + f"?domain={idea.patent.domain.key}")
    assert page.status_code == 200
    assert b"findings-sweep" in page.content and b"findings-chart" in page.content
    detail = client.get(reverse("disagreement:idea", args=[idea.pk]))
    assert b"idea-findings" in detail.content and b"2 distinct findings" in detail.content
    csv = client.get(
        reverse("findings:export", args=["idea-findings"]) + f"?domain={idea.patent.domain.key}"
    )
    assert b"".join(csv.streaming_content).count(b"\n") == 3  # header and two findings


def test_the_page_says_so_when_nothing_was_computed(manager, db):
    client = Client()
    client.force_login(manager)
    assert b"No findings have been computed yet" in client.get(reverse("findings:overview")).content


def test_an_idea_whose_reviewers_agree_on_most_points_is_not_flagged_unsaturated(snapshot, idea):
    # Two reviewers, a shared finding and a singleton: coverage 1 - 1/3 * (1*1)/(1*1 + 2) = 0.89,
    # above the 0.6 rule: not flagged.
    assert unsaturated_idea_ids(domain=idea.patent.domain.key) == set()


def test_the_command_prints_json_per_scope(rated, idea):
    out = StringIO()
    call_command(
        "findings",
        "--domain",
        idea.patent.domain.key,
        "--idea",
        str(idea.pk),
        "--format",
        "json",
        stdout=out,
    )
    body = json.loads(out.getvalue())
    (scope,) = body["scopes"]
    assert scope["scope"] == f"idea:{idea.pk}"
    assert set(scope) == {
        "scope",
        "n_rationales",
        "n_units",
        "n_findings",
        "curve",
        "chao2",
        "coverage",
        "expected_new",
    }
    assert (scope["n_rationales"], scope["n_units"], scope["n_findings"]) == (2, 3, 2)


def test_the_command_refuses_an_unknown_domain_and_a_bad_threshold(rated, idea):
    with pytest.raises(CommandError, match="--domain"):
        call_command("findings", "--domain", "nope")
    with pytest.raises(CommandError, match="--threshold"):
        call_command("findings", "--domain", idea.patent.domain.key, "--threshold", "x")


def test_judges_reasons_are_the_llm_judges_not_the_local_baselines_arithmetic(rated, reviewer):
    from django.utils import timezone

    from apps.findings.selectors import judge_reason_frame
    from apps.judges.models import JudgeConfig, JudgePrediction, JudgeRun
    from apps.screening.models import Dimension

    dimension = Dimension.objects.filter(key="specificity").first()
    run = JudgeRun.objects.create(
        purpose=JudgeRun.Purpose.PREDICTION,
        status=JudgeRun.Status.DONE,
        finished_at=timezone.now(),
        scope_key="findings-test",
        domain=rated.patent.domain,
    )
    said = {
        JudgeConfig.Backend.LOCAL: "Local baseline (not an LLM): 7 of 9 examples scored 2.",
        JudgeConfig.Backend.OPENAI: "The pricing ignores how hospitals buy equipment.",
    }
    for seed, (backend, reason) in enumerate(said.items()):
        JudgePrediction.objects.create(
            run=run, kind="personalized", k=2, seed=seed, reviewer=reviewer, idea=rated,
            dimension=dimension, score=2, reason=reason, backend=backend,
        )  # fmt: skip
    frame = judge_reason_frame()
    assert frame["text"].tolist() == [said[JudgeConfig.Backend.OPENAI]]
