"""Bad files are refused with row-and-field errors, all at once, and change nothing."""

from __future__ import annotations

import pytest

from apps.core.errors import ApplicationError
from tests.dataio.conftest import example, table_counts

pytestmark = pytest.mark.django_db

RATINGS_HEAD = "idea,reviewer,dimension,score\n"
FULL_001 = (
    "idea-001,alice,specificity,4\nidea-001,alice,technical_validity,3\nidea-001,alice,innovativeness,3\n"
    "idea-001,alice,competitive_advantage,4\nidea-001,alice,need_validity,2\nidea-001,alice,market_size,2\n"
)


def refused(
    run_import, kind: str, content: bytes | str, filename: str, **kwargs: object
) -> list[tuple]:
    """Import expecting refusal; returns (row, field, message, value) of every error and checks
    that no table changed."""
    before = table_counts()
    with pytest.raises(ApplicationError) as info:
        run_import(kind, content, filename, **kwargs)
    assert table_counts() == before
    assert info.value.errors, info.value.message
    return [(e.row, e.field, e.message, e.value) for e in info.value.errors]


def test_it_names_every_missing_and_unknown_column(run_import):
    errors = refused(run_import, "patents", "external_id,titel,domain\nUS1,A title,nlp\n", "p.csv")
    assert (1, "title", "is a required column and is missing", None) in errors
    assert any(f == "titel" and "is not a known column" in m for _, f, m, _ in errors)


def test_it_refuses_a_file_that_is_not_utf8(run_import):
    content = "external_id,domain,title\nUS1,nlp,Caf\u00e9 machine\n".encode("latin-1")
    errors = refused(run_import, "patents", content, "p.csv")
    assert errors[0][0] == 2 and errors[0][1] == "file" and "not valid UTF-8" in errors[0][2]


def test_it_refuses_empty_required_fields_and_reports_all_rows_at_once(run_import):
    content = "external_id,domain,title\nUS1,nlp,\n,nlp,Second\nUS3,,Third\nUS4,nlp,Fine\n"
    errors = refused(run_import, "patents", content, "p.csv")
    assert {(r, f) for r, f, _, _ in errors} == {(2, "title"), (3, "external_id"), (4, "domain")}


def test_it_refuses_duplicate_patent_ids(run_import):
    errors = refused(
        run_import, "patents", "external_id,domain,title\nUS1,nlp,A\nUS1,nlp,B\n", "p.csv"
    )
    assert errors == [(3, "external_id", "repeats the key of row 2", "US1")]


def test_it_refuses_an_idea_whose_patent_is_unknown(run_import, catalog):
    content = "external_id,patent,title\nidea-100,US10000001,Fine\nidea-101,US99,Orphan\n"
    errors = refused(run_import, "ideas", content, "i.csv")
    assert errors == [
        (3, "patent", "is not the external_id of a stored patent; import the patents first", "US99")
    ]


def test_it_refuses_bad_json_lines_naming_each_line(run_import):
    content = '{"external_id": "US1", "domain": "nlp", "title": "A"}\nnot json\n[1, 2]\n'
    errors = refused(run_import, "patents", content, "p.jsonl")
    assert [(r, f) for r, f, _, _ in errors] == [(2, "file"), (3, "file")]


def test_it_refuses_a_reviewer_with_an_overlong_background_or_an_unknown_domain(
    run_import, catalog
):
    content = (
        "username,background,domains,email\n"
        f"zoe,{'x' * 65},nlp,zoe@example.org\n"
        "yan,business,nlp;biology,not-an-email\n"
    )
    errors = refused(run_import, "reviewers", content, "r.csv")
    fields = {(r, f) for r, f, _, _ in errors}
    assert (2, "background") in fields
    fields = {(r, f, v) for r, f, _, v in errors}
    assert (3, "domains", "biology") in fields
    assert (3, "email", "not-an-email") in fields


def test_it_refuses_to_turn_a_manager_into_a_reviewer(run_import, catalog, manager):
    errors = refused(run_import, "reviewers", "username,background\nmona,business\n", "r.csv")
    assert errors[0][:2] == (2, "username") and "manager" in errors[0][2]


def test_it_refuses_ratings_for_unknown_ideas_reviewers_and_dimensions(run_import, reviewer_alice):
    content = (
        RATINGS_HEAD
        + "idea-999,alice,specificity,2\nidea-001,nobody,specificity,2\nidea-002,alice,charm,2\n"
    )
    errors = refused(run_import, "ratings", content, "r.csv")
    by_row = {r: (f, m, v) for r, f, m, v in errors}
    assert by_row[2][0] == "idea" and by_row[2][2] == "idea-999"
    assert by_row[3][0] == "reviewer" and by_row[3][2] == "nobody"
    assert by_row[4][0] == "dimension" and by_row[4][2] == "charm" and "specificity" in by_row[4][1]


def test_it_refuses_off_scale_and_non_integer_scores(run_import, reviewer_alice):
    content = RATINGS_HEAD + FULL_001.replace("specificity,4", "specificity,9").replace(
        "need_validity,2", "need_validity,2.5"
    )
    errors = refused(run_import, "ratings", content, "r.csv")
    assert (2, "score", "is off the scale of specificity (1-4)", "9") in errors
    assert any(
        r == 6 and f == "score" and "whole number" in m and v == "2.5" for r, f, m, v in errors
    )


def test_it_refuses_a_score_for_a_closed_stage(run_import, reviewer_alice):
    # Specificity 2 closes everything else, so scoring technical validity breaks the gate.
    content = RATINGS_HEAD + "idea-002,alice,specificity,2\nidea-002,alice,technical_validity,3\n"
    errors = refused(run_import, "ratings", content, "r.csv")
    assert len(errors) == 1
    row, field, message, value = errors[0]
    assert (row, field, value) == (3, "score", "3")
    assert message.startswith(
        "technical_validity must be left empty: it opens only when Specificity is above 2"
    )


def test_it_refuses_a_screening_that_leaves_an_open_stage_out(run_import, reviewer_alice):
    content = RATINGS_HEAD + "\n".join(FULL_001.splitlines()[:-1]) + "\n"  # market_size missing
    errors = refused(run_import, "ratings", content, "r.csv")
    assert len(errors) == 1
    row, field, message, _ = errors[0]
    assert row == 2 and field == "score"
    assert "market_size is required at this stage" in message and "idea-001 / alice" in message


def test_it_refuses_an_empty_score_for_an_open_stage(run_import, reviewer_alice):
    content = RATINGS_HEAD + FULL_001.replace("market_size,2", "market_size,")
    errors = refused(run_import, "ratings", content, "r.csv")
    assert [(r, f) for r, f, _, _ in errors] == [(7, "score")]
    assert "market_size is required at this stage" in errors[0][2]


def test_it_refuses_duplicate_rating_keys(run_import, reviewer_alice):
    content = RATINGS_HEAD + FULL_001 + "idea-001,alice,specificity,3\n"
    errors = refused(run_import, "ratings", content, "r.csv")
    assert errors == [
        (
            8,
            "dimension",
            "repeats row 2 for the same idea, reviewer and dimension",
            "idea-001 / alice / specificity",
        )
    ]


def test_it_refuses_a_bad_created_at(run_import, reviewer_alice):
    content = "idea,reviewer,dimension,score,created_at\nidea-002,alice,specificity,2,yesterday\n"
    errors = refused(run_import, "ratings", content, "r.csv")
    assert [(r, f, v) for r, f, _, v in errors] == [(2, "created_at", "yesterday")]


def test_a_bad_row_anywhere_leaves_even_the_good_rows_unsaved(run_import, examples_loaded):
    good_then_bad = example("ratings.csv").decode() + "idea-006,carol,specificity,7\n"
    errors = refused(
        run_import, "ratings", good_then_bad.replace(",4,One clear", ",1,One clear"), "r.csv"
    )
    assert any(f == "score" and v == "7" for _, f, _, v in errors)


def test_it_refuses_a_bad_rubric_naming_each_field(run_import):
    bad = """key: broken
dimensions:
  - key: a
    scale: {min: 3, max: 1}
  - key: b
    scale: {min: 1, max: 4}
    requires: [c]
  - key: a
    scale: {min: 1, max: 4}
"""
    errors = refused(run_import, "rubric", bad, "broken.yaml")
    fields = {f for _, f, _, _ in errors}
    assert {"dimensions[0].scale", "dimensions[1].requires", "dimensions[2].key"} <= fields


def test_it_refuses_a_rubric_file_that_does_not_parse(run_import):
    errors = refused(run_import, "rubric", "{not json", "r.json")
    assert errors[0][1] == "file" and "cannot be parsed" in errors[0][2]


def test_it_refuses_an_unsupported_file_type(run_import):
    errors = refused(run_import, "patents", "a,b\n", "patents.xlsx")
    assert errors[0][1] == "file" and errors[0][3] == "patents.xlsx"


def test_it_refuses_statuses_and_answers_that_contradict_the_scores(run_import, reviewer_alice):
    content = (
        "idea,reviewer,dimension,score,status,answers\n"
        "idea-002,alice,specificity,3,gated,\n"  # 3: scored, not gated
        "idea-004,alice,specificity,2,scored,\n"
        "idea-004,alice,market_size,,unanswered,\n"  # closed by specificity 2: gated
        "idea-005,alice,specificity,,declined,\n"
        "idea-005,alice,market_size,,scored,\n"  # scored without a score; not declined
        'idea-006,alice,specificity,4,,"{""hard_to_imitate"": true}"\n'  # no questions there
        "idea-001,alice,specificity,4,bogus,\n"
    )
    errors = refused(run_import, "ratings", content, "r.csv")
    got = {(r, f) for r, f, _, _ in errors}
    assert {(2, "score"), (4, "status"), (6, "score"), (7, "answers"), (8, "status")} <= got
    messages = {(r, f): m for r, f, m, _ in errors}
    assert "market_size gated" in messages[(4, "status")]
    assert "must be empty: specificity asks no questions" == messages[(7, "answers")]
