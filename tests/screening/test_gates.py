import numpy as np
import pytest

from apps.screening.gates import (
    DimensionRule,
    open_dimensions,
    open_matrix,
    screening_statuses,
    status_matrix,
    validate_scores,
)

PBIG = [
    DimensionRule("specificity", 1, 4, pass_above=2, name="Specificity"),
    DimensionRule(
        "technical_validity",
        1,
        4,
        pass_above=1,
        requires=("specificity",),
        name="Technical validity",
    ),
    DimensionRule("innovativeness", 1, 5, requires=("specificity", "technical_validity")),
    DimensionRule("competitive_advantage", 1, 4, requires=("specificity", "technical_validity")),
    DimensionRule("need_validity", 0, 3, requires=("specificity",)),
    DimensionRule("market_size", 0, 3, requires=("specificity",)),
]
ALL = [r.key for r in PBIG]


@pytest.mark.parametrize(
    ("specificity", "technical_validity", "expected"),
    [
        (1, None, ["specificity"]),
        (2, None, ["specificity"]),
        (3, 1, ["specificity", "technical_validity", "need_validity", "market_size"]),
        (4, 1, ["specificity", "technical_validity", "need_validity", "market_size"]),
        (3, 2, ALL),
        (4, 4, ALL),
    ],
)
def test_it_opens_stages_at_each_threshold(specificity, technical_validity, expected):
    scores = {"specificity": specificity, "technical_validity": technical_validity}
    assert open_dimensions(PBIG, scores) == expected


def test_it_keeps_everything_but_the_first_stage_closed_before_any_score():
    assert open_dimensions(PBIG, {}) == ["specificity"]


def test_it_refuses_a_score_for_a_closed_stage():
    errors = validate_scores(PBIG, {"specificity": 2, "market_size": 3})
    assert [(e.field, e.value) for e in errors] == [("market_size", "3")]
    assert errors[0].message == "must be left empty: it opens only when Specificity is above 2"


def test_it_names_an_unscored_gate_by_its_display_name():
    errors = validate_scores(PBIG, {"specificity": 3, "innovativeness": 4})
    messages = {e.field: e.message for e in errors}
    assert messages["innovativeness"] == (
        "must be left empty: it opens only after Technical validity is scored"
    )


def test_a_rule_without_a_display_name_is_named_by_its_key():
    rules = [
        DimensionRule("clarity", 1, 4, pass_above=2),
        DimensionRule("depth", 1, 4, requires=("clarity",)),
    ]
    assert rules[0].label == "clarity"
    errors = validate_scores(rules, {"clarity": 1, "depth": 2})
    assert errors[0].message == "must be left empty: it opens only when clarity is above 2"


def test_it_refuses_an_open_stage_left_empty():
    errors = validate_scores(PBIG, {"specificity": 3, "technical_validity": 1, "need_validity": 2})
    assert [e.field for e in errors] == ["market_size"]
    assert "required" in errors[0].message


def test_it_refuses_scores_off_the_scale_and_unknown_dimensions():
    errors = validate_scores(
        PBIG,
        {
            "specificity": 7,
            "technical_validity": 1,
            "need_validity": 0,
            "market_size": 0,
            "charm": 2,
        },
    )
    assert {(e.field, e.value) for e in errors} == {("specificity", "7"), ("charm", None)}


def test_a_complete_valid_submission_has_no_errors():
    scores = dict(zip(ALL, [4, 3, 5, 4, 0, 3], strict=True))
    assert validate_scores(PBIG, scores) == []


def test_competitive_advantage_is_derived_from_the_two_answers():
    rule = DimensionRule(
        "competitive_advantage",
        1,
        4,
        question_keys=("hard_to_imitate", "technology_essential"),
        question_scores={"no,no": 1, "no,yes": 2, "yes,no": 3, "yes,yes": 4},
    )
    assert rule.score_from_answers({"hard_to_imitate": False, "technology_essential": False}) == 1
    assert rule.score_from_answers({"hard_to_imitate": False, "technology_essential": True}) == 2
    assert rule.score_from_answers({"hard_to_imitate": True, "technology_essential": False}) == 3
    assert rule.score_from_answers({"hard_to_imitate": True, "technology_essential": True}) == 4
    assert rule.score_from_answers({"hard_to_imitate": True}) is None


def test_an_imported_advantage_score_maps_back_to_its_two_answers():
    rule = DimensionRule(
        "competitive_advantage",
        1,
        4,
        question_keys=("hard_to_imitate", "technology_essential"),
        question_scores={"no,no": 1, "no,yes": 2, "yes,no": 3, "yes,yes": 4},
    )
    assert rule.answers_for_score(2) == {"hard_to_imitate": False, "technology_essential": True}
    assert rule.answers_for_score(3) == {"hard_to_imitate": True, "technology_essential": False}
    ambiguous = DimensionRule("x", 1, 2, question_keys=("a",), question_scores={"no": 1, "yes": 1})
    assert ambiguous.answers_for_score(1) is None


def test_an_optional_open_dimension_may_stay_unanswered_and_keeps_its_gate_shut():
    from apps.screening.gates import screening_statuses

    rules = [
        DimensionRule("specificity", 1, 4, pass_above=2),
        DimensionRule("novelty", 1, 5, requires=("specificity",), optional=True, pass_above=2),
        DimensionRule("impact", 1, 5, requires=("novelty",)),
    ]
    assert validate_scores(rules, {"specificity": 3}) == []
    assert screening_statuses(rules, {"specificity": 3}) == {
        "specificity": "scored",
        "novelty": "unanswered",
        "impact": "gated",
    }
    # Gates still apply to required dimensions.
    errors = validate_scores(rules, {"specificity": 3, "novelty": 4})
    assert [(e.field, e.message) for e in errors] == [("impact", "is required at this stage")]
    assert [e.field for e in validate_scores(rules, {"novelty": 4})] == ["specificity", "novelty"]


def _random_rubric(rng: np.random.Generator) -> list[DimensionRule]:
    """Up to 7 dimensions, each requiring a random subset of the earlier ones, some gated by a
    threshold, some optional."""
    rules: list[DimensionRule] = []
    for j in range(int(rng.integers(1, 8))):
        earlier = [r.key for r in rules]
        requires = tuple(k for k in earlier if rng.random() < 0.4)
        rules.append(
            DimensionRule(
                f"d{j}",
                0,
                5,
                pass_above=int(rng.integers(0, 5)) if rng.random() < 0.6 else None,
                requires=requires,
                optional=bool(rng.random() < 0.3),
            )
        )
    return rules


@pytest.mark.parametrize("seed", range(40))
def test_the_vectorised_gates_agree_with_the_scalar_rule_on_random_screenings(seed):
    rng = np.random.default_rng(seed)
    rules = _random_rubric(rng)
    scores = rng.integers(0, 6, size=(200, len(rules))).astype(float)
    scores[rng.random(scores.shape) < 0.35] = np.nan
    is_open = open_matrix(rules, scores)
    statuses = status_matrix(rules, scores)
    for row, opened, status in zip(scores, is_open, statuses, strict=True):
        given = {r.key: int(v) for r, v in zip(rules, row, strict=True) if not np.isnan(v)}
        assert [r.key for r, o in zip(rules, opened, strict=True) if o] == open_dimensions(
            rules, given
        )
        assert dict(zip([r.key for r in rules], status, strict=True)) == screening_statuses(
            rules, given
        )


def test_the_vectorised_gates_close_what_a_failed_gate_closes_on_pbig():
    # specificity 2 fails its gate (> 2): everything after it stays closed.
    scores = np.array([[2, np.nan, np.nan, np.nan, np.nan, np.nan], [3, 2, 4, 1, 2, 0]])
    assert status_matrix(PBIG, scores).tolist() == [
        ["scored", *["gated"] * 5],
        ["scored"] * 6,
    ]
