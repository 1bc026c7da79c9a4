import pytest

from apps.core.errors import ApplicationError, PermissionDenied
from apps.screening.models import Assignment, Rating, RatingHistory
from apps.screening.services.ratings import rating_decline, rating_submit

FULL = {
    "specificity": 4,
    "technical_validity": 3,
    "innovativeness": 2,
    "need_validity": 2,
    "market_size": 1,
}
ANSWERS = {"competitive_advantage": {"hard_to_imitate": True, "technology_essential": False}}


def _state(reviewer, idea):
    ratings = Rating.objects.filter(reviewer=reviewer, idea=idea).select_related("dimension")
    return {r.dimension.key: (r.status, r.score) for r in ratings}


def test_it_stores_one_rating_per_dimension_with_the_derived_advantage(reviewer, idea):
    rating_submit(reviewer=reviewer, idea=idea, scores=FULL, answers=ANSWERS)
    state = _state(reviewer, idea)
    assert state["competitive_advantage"] == ("scored", 3)
    assert len(state) == 6
    assert Assignment.objects.get(reviewer=reviewer, idea=idea).status == "completed"


def test_lowering_specificity_closes_downstream_stages_and_keeps_old_scores_in_history(
    reviewer, idea
):
    rating_submit(reviewer=reviewer, idea=idea, scores=FULL, answers=ANSWERS)
    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 2})
    state = _state(reviewer, idea)
    assert state["specificity"] == ("scored", 2)
    assert {k for k, v in state.items() if v == ("gated", None)} == set(FULL) - {"specificity"} | {
        "competitive_advantage"
    }
    closed = RatingHistory.objects.get(rating__dimension__key="market_size", new_status="gated")
    assert (closed.old_status, closed.old_score) == ("scored", 1)


def test_it_refuses_a_gate_violation_and_changes_nothing(reviewer, idea):
    with pytest.raises(ApplicationError) as exc:
        rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 1, "market_size": 2})
    assert exc.value.errors[0].field == "market_size"
    assert not Rating.objects.exists()


def test_submitting_the_same_values_twice_adds_no_history(reviewer, idea):
    rating_submit(reviewer=reviewer, idea=idea, scores=FULL, answers=ANSWERS)
    before = RatingHistory.objects.count()
    rating_submit(reviewer=reviewer, idea=idea, scores=FULL, answers=ANSWERS)
    assert RatingHistory.objects.count() == before == 6


def test_a_reviewer_cannot_rate_an_idea_not_assigned_to_them(outsider, idea):
    with pytest.raises(PermissionDenied):
        rating_submit(reviewer=outsider, idea=idea, scores={"specificity": 1})


def test_declining_records_every_dimension_and_blocks_later_ratings(reviewer, idea):
    rating_decline(reviewer=reviewer, idea=idea, reason="outside my expertise")
    assert set(s for s, _ in _state(reviewer, idea).values()) == {"declined"}
    with pytest.raises(ApplicationError):
        rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 1})


def test_an_optional_dimension_left_out_is_stored_as_not_answered_and_can_be_answered_later(
    reviewer, idea
):
    from apps.screening.models import Dimension

    Dimension.objects.filter(key="innovativeness").update(optional=True)
    partial = {k: v for k, v in FULL.items() if k != "innovativeness"}
    rating_submit(
        reviewer=reviewer, idea=idea, scores={**partial, "innovativeness": None}, answers=ANSWERS
    )
    assert _state(reviewer, idea)["innovativeness"] == ("unanswered", None)
    rating_submit(reviewer=reviewer, idea=idea, scores=FULL, answers=ANSWERS)
    assert _state(reviewer, idea)["innovativeness"] == ("scored", 2)
    change = RatingHistory.objects.get(
        rating__dimension__key="innovativeness", old_status="unanswered"
    )
    assert (change.new_status, change.new_score) == ("scored", 2)
    # A required dimension still may not be left out.
    with pytest.raises(ApplicationError):
        rating_submit(reviewer=reviewer, idea=idea, scores=partial | {"specificity": None})


def test_answers_kept_while_the_score_stays_and_dropped_when_it_changes(reviewer, idea):
    rating_submit(reviewer=reviewer, idea=idea, scores=FULL, answers=ANSWERS)
    rating_submit(reviewer=reviewer, idea=idea, scores={**FULL, "competitive_advantage": 3})
    kept = Rating.objects.get(reviewer=reviewer, idea=idea, dimension__key="competitive_advantage")
    assert kept.answers == ANSWERS["competitive_advantage"]
    rating_submit(reviewer=reviewer, idea=idea, scores={**FULL, "competitive_advantage": 4})
    kept.refresh_from_db()
    assert (kept.score, kept.answers) == (4, None)
