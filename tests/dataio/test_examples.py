"""The documented example files load, agree with each other, and store what docs/formats.md says."""

from __future__ import annotations

import datetime as dt

import pytest

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea, Patent
from apps.screening.models import Assignment, Dimension, Rating, RatingHistory, Rubric
from tests.dataio.conftest import example, table_counts

pytestmark = pytest.mark.django_db


def test_every_example_file_loads(run_import):
    for kind, name in [
        ("rubric", "rubric.yaml"),
        ("rubric", "rubric.json"),
        ("patents", "patents.csv"),
        ("ideas", "ideas.csv"),
        ("reviewers", "reviewers.csv"),
        ("ratings", "ratings.csv"),
    ]:
        result = run_import(kind, example(name), name)
        assert result.created > 0, name
    assert Patent.objects.count() == 4
    assert Idea.objects.count() == 6
    assert User.objects.filter(role="reviewer").count() == 3
    assert Rubric.objects.filter(key__in=["quick-triage", "desk-check"]).count() == 2


def test_the_json_lines_examples_hold_the_same_records_as_the_csv_ones(examples_loaded, run_import):
    before = table_counts()
    for kind in ["patents", "ideas", "reviewers", "ratings"]:
        result = run_import(kind, example(f"{kind}.jsonl"), f"{kind}.jsonl")
        assert (result.created, result.updated) == (0, 0), kind
        assert result.unchanged > 0
    assert table_counts() == before


def test_the_json_lines_examples_load_on_their_own(run_import):
    for kind in ["patents", "ideas", "reviewers", "ratings"]:
        assert run_import(kind, example(f"{kind}.jsonl"), f"{kind}.jsonl").created > 0
    assert Rating.objects.filter(status="scored").count() == 35


def test_patents_create_their_domains_with_the_given_names(catalog):
    assert dict(Domain.objects.values_list("key", "name")) == {
        "nlp": "NLP",
        "materials": "Materials Chemistry",
    }
    assert Idea.objects.get(external_id="idea-003").patent.domain.key == "materials"


def test_reviewers_get_the_reviewer_role_an_unusable_password_and_a_profile(examples_loaded):
    alice = User.objects.get(username="alice")
    assert alice.role == User.Role.REVIEWER
    assert not alice.has_usable_password()
    assert (alice.first_name, alice.last_name, alice.email) == (
        "Alice",
        "Martin",
        "alice@example.org",
    )
    profile = alice.reviewer_profile
    assert profile.background == "technical" and profile.years_experience == 12
    assert sorted(profile.domains.values_list("key", flat=True)) == ["materials", "nlp"]


def test_closed_stages_are_stored_as_not_rated_by_design(examples_loaded):
    # idea-002: specificity 2 closes every other PBIG dimension; the file has only that row.
    rows = {
        r.dimension.key: r
        for r in Rating.objects.filter(
            idea__external_id="idea-002", reviewer__username="alice"
        ).select_related("dimension")
    }
    assert len(rows) == 6
    assert rows["specificity"].status == "scored" and rows["specificity"].score == 2
    assert {k for k, r in rows.items() if r.status == "gated"} == {
        "technical_validity",
        "innovativeness",
        "competitive_advantage",
        "need_validity",
        "market_size",
    }
    assert all(r.score is None for r in rows.values() if r.status == "gated")
    # idea-003: technical validity 1 closes innovativeness and competitive advantage only.
    statuses = dict(
        Rating.objects.filter(idea__external_id="idea-003", reviewer__username="alice").values_list(
            "dimension__key", "status"
        )
    )
    assert statuses == {
        "specificity": "scored",
        "technical_validity": "scored",
        "innovativeness": "gated",
        "competitive_advantage": "gated",
        "need_validity": "scored",
        "market_size": "scored",
    }


def test_imported_ratings_keep_their_source_rationale_time_history_and_assignment(examples_loaded):
    rating = Rating.objects.get(
        idea__external_id="idea-001", reviewer__username="alice", dimension__key="specificity"
    )
    assert rating.source == "import" and rating.score == 4
    assert rating.rationale == "One clear product: a brief per granted patent."
    assert rating.created_at == dt.datetime(2024, 3, 4, 9, 15, tzinfo=dt.UTC)
    assert RatingHistory.objects.count() == Rating.objects.count() == 42
    history = rating.history.get()
    assert (history.old_status, history.new_status, history.new_score, history.source) == (
        "",
        "scored",
        4,
        "import",
    )
    assert Assignment.objects.count() == 7
    assert set(Assignment.objects.values_list("status", flat=True)) == {"completed"}


def test_the_gateless_rubric_example_has_no_gates(run_import):
    run_import("rubric", example("rubric.yaml"), "rubric.yaml")
    dims = Dimension.objects.filter(rubric__key="quick-triage")
    assert dims.count() == 3
    assert all(d.requires == [] and d.pass_above is None for d in dims)


def test_ratings_on_a_gateless_rubric_need_every_dimension(run_import, catalog, reviewer_alice):
    run_import("rubric", example("rubric.yaml"), "rubric.yaml")
    Domain.objects.filter(key="nlp").update(rubric=Rubric.objects.get(key="quick-triage"))
    ok = (
        "idea,reviewer,dimension,score\n"
        "idea-001,alice,clarity,3\n"
        "idea-001,alice,feasibility,2\n"
        "idea-001,alice,appeal,5\n"
    )
    assert run_import("ratings", ok, "r.csv").created == 3
    with pytest.raises(Exception) as info:
        run_import("ratings", "idea,reviewer,dimension,score\nidea-006,alice,clarity,3\n", "r.csv")
    fields = [(e.row, e.field, e.message) for e in info.value.errors]
    assert any("feasibility is required" in m for _, _, m in fields)
    assert any("appeal is required" in m for _, _, m in fields)
