"""Re-importing changes nothing; changed rows are updated in place and leave history."""

from __future__ import annotations

import pytest
from django.db import transaction

from apps.catalog.models import Idea, Patent
from apps.dataio.importers import ratings as ratings_importer
from apps.screening.models import Assignment, Rating, RatingHistory
from tests.dataio.conftest import example, table_counts

pytestmark = pytest.mark.django_db


def test_reimporting_every_example_changes_nothing(examples_loaded, run_import):
    before = table_counts()
    for kind in ["patents", "ideas", "reviewers", "ratings"]:
        result = run_import(kind, example(f"{kind}.csv"), f"{kind}.csv")
        assert (result.created, result.updated) == (0, 0)
        assert result.unchanged == result.total > 0
    assert table_counts() == before


def test_reimporting_ratings_writes_no_history(reviewer_alice, run_import):
    first = run_import("ratings", example("ratings.csv"), "ratings.csv")
    again = run_import("ratings", example("ratings.csv"), "ratings.csv")
    assert (first.created, again.created, again.updated, again.unchanged) == (42, 0, 0, 42)
    assert RatingHistory.objects.count() == 42


def test_a_changed_score_updates_the_rating_and_writes_history(reviewer_alice, run_import):
    run_import("ratings", example("ratings.csv"), "ratings.csv")
    changed = (
        example("ratings.csv")
        .decode()
        .replace("idea-001,alice,innovativeness,3,", "idea-001,alice,innovativeness,5,")
    )
    result = run_import("ratings", changed, "ratings.csv")
    assert (result.created, result.updated, result.unchanged) == (0, 1, 41)
    rating = Rating.objects.get(
        idea__external_id="idea-001", reviewer__username="alice", dimension__key="innovativeness"
    )
    assert rating.score == 5
    last = rating.history.order_by("-id").first()
    assert (last.old_score, last.new_score, last.source) == (3, 5, "import")
    assert RatingHistory.objects.count() == 43


def test_lowering_an_upstream_score_closes_the_downstream_stages_again(reviewer_alice, run_import):
    run_import("ratings", example("ratings.csv"), "ratings.csv")
    # alice now finds idea-001 too vague: only specificity remains, the rest become not rated.
    result = run_import(
        "ratings", "idea,reviewer,dimension,score\nidea-001,alice,specificity,2\n", "r.csv"
    )
    assert (result.created, result.updated, result.unchanged) == (0, 6, 0)
    statuses = dict(
        Rating.objects.filter(idea__external_id="idea-001", reviewer__username="alice").values_list(
            "dimension__key", "status"
        )
    )
    assert list(statuses.values()).count("gated") == 5
    gated = Rating.objects.get(
        idea__external_id="idea-001", reviewer__username="alice", dimension__key="market_size"
    )
    assert gated.score is None and gated.rationale == ""
    assert gated.history.order_by("-id").first().old_score == 2


def test_a_rationale_column_left_out_keeps_the_stored_rationales(reviewer_alice, run_import):
    run_import("ratings", example("ratings.csv"), "ratings.csv")
    result = run_import(
        "ratings", "idea,reviewer,dimension,score\nidea-002,alice,specificity,2\n", "r.csv"
    )
    assert result.updated == 0
    assert Rating.objects.get(
        idea__external_id="idea-002", reviewer__username="alice", dimension__key="specificity"
    ).rationale


def test_importing_ratings_completes_a_pending_assignment(reviewer_alice, run_import):
    idea = Idea.objects.get(external_id="idea-002")
    Assignment.objects.create(reviewer=reviewer_alice, idea=idea)
    run_import("ratings", "idea,reviewer,dimension,score\nidea-002,alice,specificity,2\n", "r.csv")
    assert Assignment.objects.get(reviewer=reviewer_alice, idea=idea).status == "completed"
    assert Assignment.objects.filter(reviewer=reviewer_alice).count() == 1


def test_a_changed_patent_title_is_updated_and_other_columns_kept(catalog, run_import):
    result = run_import(
        "patents", "external_id,domain,title\nUS10000001,nlp,A new title\n", "p.csv"
    )
    assert (result.created, result.updated, result.unchanged) == (0, 1, 0)
    patent = Patent.objects.get(external_id="US10000001")
    assert patent.title == "A new title" and patent.abstract.startswith("A neural summariser")
    assert Patent.objects.count() == 4


def test_a_dry_run_counts_but_saves_nothing(reviewer_alice, run_import):
    before = table_counts()
    result = run_import("ratings", example("ratings.csv"), "ratings.csv", dry_run=True)
    assert (result.created, result.dry_run) == (42, True)
    assert table_counts() == before


def test_a_real_import_tells_metrics_and_judges_which_reviewers_changed(
    reviewer_alice, run_import, monkeypatch
):
    calls = []
    monkeypatch.setattr(
        ratings_importer,
        "ratings_changed",
        lambda *, reviewer_ids: calls.append(sorted(reviewer_ids)),
    )
    run_import("ratings", example("ratings.csv"), "ratings.csv")
    run_import("ratings", example("ratings.csv"), "ratings.csv")  # unchanged: nobody to tell
    run_import("ratings", example("ratings.csv"), "ratings.csv", dry_run=True)
    from apps.accounts.models import User

    assert calls == [
        sorted(
            User.objects.filter(username__in=["alice", "bob", "carol"]).values_list("id", flat=True)
        )
    ]


def test_a_rubric_reimport_counts_unchanged_dimensions_and_can_become_the_default(run_import):
    first = run_import("rubric", example("rubric.yaml"), "rubric.yaml")
    again = run_import("rubric", example("rubric.yaml"), "rubric.yaml", make_default=True)
    assert (first.created, again.created, again.updated, again.unchanged) == (3, 0, 0, 3)
    from apps.screening.models import Rubric

    assert Rubric.objects.get(is_default=True).key == "quick-triage"


@pytest.mark.django_db(transaction=True)
def test_a_ratings_import_commits_for_real_and_can_run_again(reviewer_alice, run_import):
    # Outside a test transaction the temporary table is dropped at a real commit.
    with transaction.atomic():
        run_import("ratings", example("ratings.csv"), "ratings.csv")
    assert run_import("ratings", example("ratings.csv"), "ratings.csv").unchanged == 42
    assert Rating.objects.count() == 42
