"""The staged form keeps typed work while stages close, and asks before a save drops or
contradicts something; an off-scale value gets one message; optional dimensions can be skipped."""

from __future__ import annotations

import re

from apps.screening.forms import ScreeningForm
from apps.screening.models import Dimension, Rating, RatingHistory
from apps.screening.selectors import dimensions_for_idea
from tests.screening.conftest import FULL_FORM, post_form, rate_url


def _state(reviewer, idea):
    return {
        r.dimension.key: (r.status, r.score)
        for r in Rating.objects.filter(reviewer=reviewer, idea=idea).select_related("dimension")
    }


def _checked(html: str) -> set[str]:
    return set(re.findall(r'id="([\w-]+)" value="\w+" checked', html))


STAGE_2_TYPED = {
    "score-technical_validity": "3",
    "score-need_validity": "2",
    "score-market_size": "1",
    "rationale-market_size": "Every plant\nhas this problem.",
}


def test_closing_a_stage_keeps_its_answers_and_reopening_restores_them(client_of, reviewer, idea):
    client = client_of(reviewer)
    closed = post_form(
        client, idea, {"score-specificity": "2", **STAGE_2_TYPED}, action="", htmx=True
    ).content.decode()
    assert 'id="dim-market_size"' not in closed
    assert '<input type="hidden" name="score-market_size" value="1">' in closed
    assert (
        '<input type="hidden" name="rationale-market_size" value="Every plant\nhas this problem.">'
        in closed
    )
    assert "Saving now stores Technical validity, Need validity, Market size" in closed

    # The browser sends the hidden inputs back with the next change: the stage comes back whole.
    kept = dict(re.findall(r'<input type="hidden" name="([\w-]+)" value="([^"]*)">', closed))
    kept = {k: v.replace("&#x27;", "'") for k, v in kept.items()}
    reopened = post_form(
        client, idea, {**kept, "score-specificity": "3"}, action="", htmx=True
    ).content.decode()
    assert {
        "score-technical_validity-3",
        "score-need_validity-2",
        "score-market_size-1",
    } <= _checked(reopened)
    assert "Every plant\nhas this problem.</textarea>" in reopened
    assert not Rating.objects.exists()


def test_editing_keeps_the_saved_downstream_scores_while_specificity_goes_down_and_up(
    client_of, reviewer, idea
):
    client = client_of(reviewer)
    assert post_form(client, idea, FULL_FORM).status_code == 302
    down = post_form(
        client, idea, dict(FULL_FORM, **{"score-specificity": "1"}), action="", htmx=True
    ).content.decode()
    assert "the old scores stay" in down or "Your earlier scores stay" in down
    kept = dict(re.findall(r'<input type="hidden" name="([\w-]+)" value="([^"]*)">', down))
    assert len(kept) == 6  # five downstream scores (two answers for advantage) and no rationale
    up = post_form(
        client, idea, {**kept, "score-specificity": "3"}, action="", htmx=True
    ).content.decode()
    assert {
        "score-technical_validity-3",
        "score-innovativeness-2",
        "answer-competitive_advantage-hard_to_imitate-yes",
        "answer-competitive_advantage-technology_essential-no",
        "score-need_validity-2",
        "score-market_size-1",
    } <= _checked(up)


def test_saving_a_lowered_score_first_names_what_will_be_stored_as_not_rated_by_design(
    client_of, reviewer, idea
):
    client = client_of(reviewer)
    post_form(client, idea, FULL_FORM)
    lowered = dict(FULL_FORM, **{"score-specificity": "2"})
    response = post_form(client, idea, lowered)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="confirm-box"' in html
    assert (
        # In form order (stage by stage), as the reviewer sees them.
        "Saving now stores Technical validity, Need validity, Market size, Innovativeness, "
        "Competitive advantage as not rated by design" in html
    )
    assert "Your earlier scores stay in your edit history." in html
    assert "Save anyway" in html
    assert _state(reviewer, idea)["specificity"] == ("scored", 4)  # nothing saved yet

    # A confirmation of other warnings does not count.
    response = post_form(client, idea, dict(lowered, confirm="0123456789abcdef"))
    assert response.status_code == 200
    assert _state(reviewer, idea)["specificity"] == ("scored", 4)

    signature = re.search(r'name="confirm" value="(\w+)"', html).group(1)
    response = post_form(client, idea, dict(lowered, confirm=signature))
    assert response.status_code == 302
    state = _state(reviewer, idea)
    assert state["specificity"] == ("scored", 2)
    assert state["market_size"] == ("gated", None)
    old = RatingHistory.objects.get(rating__dimension__key="market_size", new_status="gated")
    assert (old.old_status, old.old_score) == ("scored", 1)


def test_need_validity_2_with_market_size_0_asks_for_a_confirmation(client_of, reviewer, idea):
    client = client_of(reviewer)
    contradicting = dict(FULL_FORM, **{"score-need_validity": "2", "score-market_size": "0"})
    live = post_form(client, idea, contradicting, action="", htmx=True).content.decode()
    assert "Market size 0 says “Not a B2B product”, but Need validity 2 grades it" in live

    response = post_form(client, idea, contradicting)
    html = response.content.decode()
    assert response.status_code == 200
    assert "Market size 0 says “Not a B2B product”, but Need validity 2 grades it" in html
    assert not Rating.objects.exists()
    signature = re.search(r'name="confirm" value="(\w+)"', html).group(1)
    assert post_form(client, idea, dict(contradicting, confirm=signature)).status_code == 302
    assert _state(reviewer, idea)["market_size"] == ("scored", 0)


def test_not_b2b_on_both_dimensions_is_saved_without_a_question(client_of, reviewer, idea):
    agreeing = dict(FULL_FORM, **{"score-need_validity": "0", "score-market_size": "0"})
    assert post_form(client_of(reviewer), idea, agreeing).status_code == 302
    assert _state(reviewer, idea)["need_validity"] == ("scored", 0)


def test_an_off_scale_submission_gets_one_message(client_of, reviewer, idea):
    response = post_form(client_of(reviewer), idea, dict(FULL_FORM, **{"score-market_size": "7"}))
    html = response.content.decode()
    assert response.status_code == 422
    assert html.count("must be between 0 and 3") == 1
    assert "Market size</strong></a>: 1 problem" in html
    assert not Rating.objects.exists()


def test_an_off_scale_answer_gets_one_plain_message(client_of, reviewer, idea):
    data = dict(FULL_FORM, **{"answer-competitive_advantage-hard_to_imitate": "maybe"})
    html = post_form(client_of(reviewer), idea, data).content.decode()
    assert html.count("must be answered yes or no") == 1
    assert "Select a valid choice" not in html


def test_an_optional_dimension_offers_skip_and_a_skip_leaves_it_out_of_the_submission(
    client_of, reviewer, idea
):
    Dimension.objects.filter(key="market_size").update(optional=True)
    html = post_form(
        client_of(reviewer), idea, {"score-specificity": "4"}, action="", htmx=True
    ).content.decode()
    assert 'name="skip-market_size"' in html
    assert 'name="skip-need_validity"' not in html

    dimensions = dimensions_for_idea(idea)
    data = dict(FULL_FORM, **{"skip-market_size": "on", "rationale-market_size": "n/a"})
    form = ScreeningForm(data, dimensions=dimensions)
    scores, _answers, rationales = form.payload()
    assert "market_size" not in scores
    assert "market_size" not in rationales
    assert form.is_complete()
    # Without the skip, an unanswered optional dimension is still to do on the form.
    del data["skip-market_size"], data["score-market_size"]
    assert [d.key for d in ScreeningForm(data, dimensions=dimensions).missing()] == ["market_size"]


def test_a_saved_not_answered_dimension_comes_back_as_skipped(client_of, reviewer, idea):
    from apps.screening.forms import skip_name

    Dimension.objects.filter(key="market_size").update(optional=True)
    dimensions = dimensions_for_idea(idea)
    market = next(d for d in dimensions if d.key == "market_size")
    saved = {"market_size": Rating(dimension=market, status=Rating.Status.NOT_ANSWERED)}
    assert ScreeningForm.initial_from(dimensions, saved) == {skip_name(market): True}
    client = client_of(reviewer)
    assert client.get(rate_url(idea)).status_code == 200
