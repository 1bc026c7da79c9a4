"""The staged screening form: access, gates, htmx partials, edits and declines."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.screening.models import Assignment, Rating, RatingHistory
from apps.screening.services.ratings import rating_submit
from tests.factories import AssignmentFactory, IdeaFactory
from tests.screening.conftest import FULL_FORM, post_form, rate_url


def _state(reviewer, idea):
    return {
        r.dimension.key: (r.status, r.score)
        for r in Rating.objects.filter(reviewer=reviewer, idea=idea).select_related("dimension")
    }


def _open_dimensions(html: str) -> set[str]:
    keys = [
        "specificity",
        "technical_validity",
        "innovativeness",
        "competitive_advantage",
        "need_validity",
        "market_size",
    ]
    return {k for k in keys if f'id="dim-{k}"' in html}


STAGE_1 = {"specificity"}
STAGE_2 = STAGE_1 | {"technical_validity", "need_validity", "market_size"}
ALL = STAGE_2 | {"innovativeness", "competitive_advantage"}


# Access ------------------------------------------------------------------------------------------


def test_an_anonymous_visitor_is_sent_to_the_login_page(client, idea):
    response = client.get(rate_url(idea))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_reviewer_sees_the_patent_next_to_the_idea_and_only_the_first_stage(
    client_of, reviewer, idea
):
    response = client_of(reviewer).get(rate_url(idea))
    html = response.content.decode()
    assert response.status_code == 200
    for text in (
        idea.title,
        idea.description,
        idea.implementation,
        idea.differentiation,
        idea.source,
        idea.patent.title,
        idea.patent.abstract,
        idea.patent.claims,
    ):
        assert text in html
    assert '<details class="scr-claims">' in html
    assert _open_dimensions(html) == STAGE_1
    # Every level of specificity is a radio button with its meaning beside it.
    assert "Exactly one concrete product is clearly pictured." in html
    assert html.count('name="score-specificity"') == 4


def test_a_reviewer_gets_404_for_an_idea_not_assigned_to_them(client_of, outsider, idea):
    assert client_of(outsider).get(rate_url(idea)).status_code == 404
    response = post_form(client_of(outsider), idea, FULL_FORM)
    assert response.status_code == 404
    assert not Rating.objects.exists()


@pytest.mark.parametrize("persona", ["manager", "admin"])
def test_managers_and_admins_cannot_open_or_post_the_rating_form(
    request, client_of, idea, reviewer, persona
):
    user = request.getfixturevalue(persona)
    client = client_of(user)
    assert client.get(rate_url(idea)).status_code == 403
    assert post_form(client, idea, FULL_FORM).status_code == 403
    decline = reverse("screening:decline", kwargs={"idea_id": idea.id})
    assert client.post(decline, {"confirm": "on"}).status_code == 403
    assert not Rating.objects.exists()


def test_an_anonymous_decline_is_sent_to_the_login_page(client, idea, reviewer):
    response = client.post(
        reverse("screening:decline", kwargs={"idea_id": idea.id}), {"confirm": "on"}
    )
    assert response.status_code == 302
    assert Assignment.objects.get(reviewer=reviewer).status == "pending"


def test_the_page_never_shows_another_reviewers_scores(client_of, reviewer, other_reviewer, idea):
    rating_submit(
        reviewer=other_reviewer,
        idea=idea,
        scores={
            "specificity": 4,
            "technical_validity": 4,
            "innovativeness": 5,
            "need_validity": 3,
            "market_size": 3,
        },
        answers={"competitive_advantage": {"hard_to_imitate": True, "technology_essential": True}},
        rationales={"specificity": "OTTO-SECRET-RATIONALE"},
    )
    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 2})
    html = client_of(reviewer).get(rate_url(idea)).content.decode()
    assert "OTTO-SECRET-RATIONALE" not in html
    assert "Otto" not in html
    assert 'id="score-specificity-2" value="2" checked' in html
    assert 'value="4" checked' not in html
    assert "(6 changes)" in html  # Rita's six rows (one score, five gated), none of Otto's


# Stages through the form -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("specificity", "expected"), [("1", STAGE_1), ("2", STAGE_1), ("3", STAGE_2), ("4", STAGE_2)]
)
def test_the_second_stage_opens_only_when_specificity_is_above_2(
    client_of, reviewer, idea, specificity, expected
):
    response = post_form(
        client_of(reviewer), idea, {"score-specificity": specificity}, action="", htmx=True
    )
    assert _open_dimensions(response.content.decode()) == expected


@pytest.mark.parametrize(("validity", "expected"), [("1", STAGE_2), ("2", ALL), ("4", ALL)])
def test_the_third_stage_opens_only_when_technical_validity_is_above_1(
    client_of, reviewer, idea, validity, expected
):
    data = {"score-specificity": "3", "score-technical_validity": validity}
    response = post_form(client_of(reviewer), idea, data, action="", htmx=True)
    assert _open_dimensions(response.content.decode()) == expected


def test_an_htmx_change_returns_only_the_stages_partial(client_of, reviewer, idea):
    response = post_form(
        client_of(reviewer), idea, {"score-specificity": "4"}, action="", htmx=True
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="stages"')
    assert "<html" not in html and "<form" not in html
    assert not Rating.objects.exists()


def test_continue_without_javascript_returns_the_whole_page_with_the_next_stage_open(
    client_of, reviewer, idea
):
    response = post_form(client_of(reviewer), idea, {"score-specificity": "4"}, action="continue")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" in html and 'id="rating-form"' in html
    assert _open_dimensions(html) == STAGE_2
    assert not Rating.objects.exists()


def test_a_failed_gate_is_shown_as_not_rated_by_design(client_of, reviewer, idea):
    html = post_form(
        client_of(reviewer), idea, {"score-specificity": "2"}, action="continue"
    ).content.decode()
    assert 'data-closed="closed"' in html
    assert "Not rated by design" in html


def test_need_and_market_offer_not_a_b2b_product_as_a_category(client_of, reviewer, idea):
    html = post_form(
        client_of(reviewer), idea, {"score-specificity": "4"}, action="continue"
    ).content.decode()
    assert html.count("Not a B2B product.") == 2
    assert html.count("category, not a grade") == 2


def test_a_low_specificity_submission_stores_the_rest_as_not_rated_by_design(
    client_of, reviewer, idea
):
    response = post_form(client_of(reviewer), idea, {"score-specificity": "2"})
    assert response.status_code == 302
    state = _state(reviewer, idea)
    assert state.pop("specificity") == ("scored", 2)
    assert set(state.values()) == {("gated", None)}


def test_a_complete_submission_stores_the_derived_advantage_and_both_answers(
    client_of, reviewer, idea
):
    data = dict(FULL_FORM, **{"rationale-innovativeness": "  Seen this in trade fairs.  "})
    response = post_form(client_of(reviewer), idea, data)
    assert response.status_code == 302
    assert response["Location"] == reverse("screening:queue")
    advantage = Rating.objects.get(reviewer=reviewer, dimension__key="competitive_advantage")
    assert (advantage.score, advantage.answers) == (
        3,
        {"hard_to_imitate": True, "technology_essential": False},
    )
    assert (
        Rating.objects.get(reviewer=reviewer, dimension__key="innovativeness").rationale
        == "Seen this in trade fairs."
    )
    assert Assignment.objects.get(reviewer=reviewer, idea=idea).status == "completed"


def test_it_refuses_a_submission_that_leaves_an_open_stage_empty(client_of, reviewer, idea):
    response = post_form(client_of(reviewer), idea, {"score-specificity": "3"})
    html = response.content.decode()
    assert response.status_code == 422
    assert "Your rating was not saved." in html
    assert "Technical validity is required at this stage" in html
    assert "Market size is required at this stage" in html
    assert not Rating.objects.exists()


def test_a_score_for_a_closed_stage_is_kept_but_never_saved_without_a_confirmation(
    client_of, reviewer, idea
):
    data = {"score-specificity": "2", "score-market_size": "3"}
    response = post_form(client_of(reviewer), idea, data)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="confirm-box"' in html
    assert "Saving now stores Market size as not rated by design" in html
    assert '<input type="hidden" name="score-market_size" value="3">' in html
    assert not Rating.objects.exists()


def test_forged_advantage_answers_behind_a_failed_gate_are_not_saved_without_a_confirmation(
    client_of, reviewer, idea
):
    data = dict(FULL_FORM, **{"score-technical_validity": "1", "score-innovativeness": ""})
    response = post_form(client_of(reviewer), idea, data)
    assert response.status_code == 200
    assert "Saving now stores Competitive advantage as not rated by design" in (
        response.content.decode()
    )
    assert not Rating.objects.exists()


@pytest.mark.parametrize(
    ("value", "message"), [("9", "must be between 1 and 4"), ("abc", "must be a whole number")]
)
def test_it_names_the_field_of_a_bad_value(client_of, reviewer, idea, value, message):
    response = post_form(client_of(reviewer), idea, {"score-specificity": value})
    assert response.status_code == 422
    assert f"Specificity {message}" in response.content.decode()


def test_it_refuses_a_half_answered_advantage(client_of, reviewer, idea):
    data = dict(FULL_FORM)
    del data["answer-competitive_advantage-technology_essential"]
    response = post_form(client_of(reviewer), idea, data)
    assert response.status_code == 422
    assert (
        "Competitive advantage needs an answer to every question (missing: technology_essential)"
        in (response.content.decode())
    )
    assert not Rating.objects.exists()


# Editing -----------------------------------------------------------------------------------------


def test_editing_prefills_the_current_values(client_of, reviewer, idea):
    client = client_of(reviewer)
    post_form(client, idea, dict(FULL_FORM, **{"rationale-specificity": "Crisp product."}))
    html = client.get(rate_url(idea)).content.decode()
    assert _open_dimensions(html) == ALL
    assert 'id="score-specificity-4" value="4" checked' in html
    assert 'id="answer-competitive_advantage-hard_to_imitate-yes" value="yes" checked' in html
    assert 'id="answer-competitive_advantage-technology_essential-no" value="no" checked' in html
    assert "Crisp product.</textarea>" in html
    assert "Save changes" in html


def test_lowering_specificity_on_edit_closes_downstream_stages_and_keeps_history(
    client_of, reviewer, idea
):
    client = client_of(reviewer)
    post_form(client, idea, FULL_FORM)
    response = post_form(client, idea, {"score-specificity": "2"})
    assert response.status_code == 200  # asks first, names what closes
    assert _state(reviewer, idea)["market_size"] == ("scored", 1)
    confirm = response.context["form"].warnings_signature()
    response = post_form(client, idea, {"score-specificity": "2", "confirm": confirm})
    assert response.status_code == 302
    state = _state(reviewer, idea)
    assert state["specificity"] == ("scored", 2)
    assert state["market_size"] == ("gated", None)
    old = RatingHistory.objects.get(rating__dimension__key="market_size", new_status="gated")
    assert (old.old_status, old.old_score) == ("scored", 1)
    html = client.get(rate_url(idea)).content.decode()
    assert _open_dimensions(html) == STAGE_1
    assert "1 → <strong>not rated by design</strong>" in html
    assert "4 → <strong>2</strong>" in html


def test_a_first_rating_moves_on_to_the_next_pending_idea(client_of, reviewer, idea):
    following = IdeaFactory(patent__domain=idea.patent.domain)
    AssignmentFactory(reviewer=reviewer, idea=following)
    client = client_of(reviewer)
    response = post_form(client, idea, FULL_FORM)
    assert response["Location"] == rate_url(following)
    page = client.get(response["Location"]).content.decode()
    assert "Saved your rating of" in page and following.title in page


# Declining ---------------------------------------------------------------------------------------


def test_declining_needs_a_confirmation(client_of, reviewer, idea):
    url = reverse("screening:decline", kwargs={"idea_id": idea.id})
    response = client_of(reviewer).post(url, {"reason": "not my field"})
    assert response.status_code == 422
    assert "tick this box to confirm" in response.content.decode()
    assert Assignment.objects.get(reviewer=reviewer).status == "pending"


def test_declining_removes_the_idea_from_the_queue(client_of, reviewer, idea):
    client = client_of(reviewer)
    url = reverse("screening:decline", kwargs={"idea_id": idea.id})
    response = client.post(url, {"reason": "Claims are about chemistry", "confirm": "on"})
    assert response.status_code == 302 and response["Location"] == reverse("screening:queue")
    assignment = Assignment.objects.get(reviewer=reviewer)
    assert (assignment.status, assignment.decline_reason) == (
        "declined",
        "Claims are about chemistry",
    )
    assert set(_state(reviewer, idea).values()) == {("declined", None)}
    queue = client.get(reverse("screening:queue")).content.decode()
    assert "declined" in queue and "Nothing to rate" in queue
    page = client.get(rate_url(idea)).content.decode()
    assert 'id="declined-notice"' in page and 'id="rating-form"' not in page


def test_a_declined_idea_cannot_be_rated_through_a_forged_post(client_of, reviewer, idea):
    client = client_of(reviewer)
    client.post(reverse("screening:decline", kwargs={"idea_id": idea.id}), {"confirm": "on"})
    response = post_form(client, idea, FULL_FORM)
    assert response.status_code == 422
    assert "You declined this idea" in response.content.decode()
    assert set(_state(reviewer, idea).values()) == {("declined", None)}


def test_any_rubric_drives_the_form_including_one_without_gates(client_of, reviewer, idea, domain):
    from apps.screening.models import Dimension, Rubric

    rubric = Rubric.objects.create(key="quick", name="Quick check")
    for position, key in enumerate(["clarity", "appeal"]):
        Dimension.objects.create(
            rubric=rubric,
            key=key,
            name=key.title(),
            position=position,
            scale_min=1,
            scale_max=3,
            levels={"1": f"Low {key}", "2": f"Some {key}", "3": f"High {key}"},
        )
    domain.rubric = rubric
    domain.save(update_fields=["rubric"])
    client = client_of(reviewer)
    html = client.get(rate_url(idea)).content.decode()
    assert 'id="dim-clarity"' in html and 'id="dim-appeal"' in html
    assert "High appeal" in html and 'id="dim-specificity"' not in html
    assert "Stage 2" not in html
    response = post_form(client, idea, {"score-clarity": "3", "score-appeal": "1"})
    assert response.status_code == 302
    assert _state(reviewer, idea) == {"clarity": ("scored", 3), "appeal": ("scored", 1)}


def test_an_imported_advantage_score_shows_as_its_two_answers(client_of, reviewer, idea):
    rating_submit(
        reviewer=reviewer,
        idea=idea,
        source="import",
        scores={
            "specificity": 4,
            "technical_validity": 3,
            "innovativeness": 2,
            "competitive_advantage": 2,
            "need_validity": 1,
            "market_size": 1,
        },
    )
    Rating.objects.filter(dimension__key="competitive_advantage").update(answers=None)
    html = client_of(reviewer).get(rate_url(idea)).content.decode()
    assert 'id="answer-competitive_advantage-hard_to_imitate-no" value="no" checked' in html
    assert 'id="answer-competitive_advantage-technology_essential-yes" value="yes" checked' in html


def test_the_key_legend_gives_each_scale_as_it_is_and_the_skip_key(client_of, reviewer, idea):
    import re

    html = client_of(reviewer).get(rate_url(idea)).content.decode()
    legend = re.search(r'<div class="scr-keys[^"]*" id="key-legend">(.*?)</div>', html, re.S)
    assert legend
    text = " ".join(legend.group(1).split())
    # PBIG: 1-4 on four dimensions, 1-5 on innovativeness, 0-3 (0 a category) on two.
    assert "<kbd>1</kbd>–<kbd>4</kbd> Specificity" in text
    assert "<kbd>1</kbd>–<kbd>5</kbd> Innovativeness" in text
    assert "<kbd>0</kbd>–<kbd>3</kbd> Need validity, Market size (0: a category)" in text
    assert "<kbd>0</kbd>–<kbd>5</kbd>" not in text
    assert "<kbd>s</kbd> skip" in text
