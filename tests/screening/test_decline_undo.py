"""A reviewer takes a decline back while nobody has acted on it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.core.errors import ApplicationError
from apps.screening.models import Assignment, Rating, RatingHistory
from apps.screening.services.assignments import assignment_create
from apps.screening.services.ratings import rating_decline, rating_decline_undo, rating_submit
from tests.factories import ReviewerFactory
from tests.screening.conftest import FULL_FORM, post_form, rate_url


def _undo_url(idea) -> str:
    return reverse("screening:decline_undo", kwargs={"idea_id": idea.id})


def _state(reviewer, idea):
    return {
        r.dimension.key: (r.status, r.score)
        for r in Rating.objects.filter(reviewer=reviewer, idea=idea).select_related("dimension")
    }


def test_taking_back_a_decline_of_an_unrated_idea_puts_it_back_in_the_queue(
    client_of, reviewer, idea
):
    client = client_of(reviewer)
    client.post(reverse("screening:decline", kwargs={"idea_id": idea.id}), {"confirm": "on"})
    queue = client.get(reverse("screening:queue")).content.decode()
    assert "Take back" in queue

    response = client.post(_undo_url(idea))
    assert response.status_code == 302
    assert response["Location"] == rate_url(idea)
    assignment = Assignment.objects.get(reviewer=reviewer, idea=idea)
    assert (assignment.status, assignment.decline_reason) == ("pending", "")
    assert not Rating.objects.filter(reviewer=reviewer, idea=idea).exists()
    page = client.get(rate_url(idea)).content.decode()
    assert "it is back in your queue" in page
    assert 'id="rating-form"' in page
    # Rated as usual afterwards.
    assert post_form(client, idea, FULL_FORM).status_code == 302


def test_taking_back_a_decline_of_a_rated_idea_restores_the_scores_with_history(
    client_of, reviewer, idea
):
    client = client_of(reviewer)
    assert (
        post_form(client, idea, dict(FULL_FORM, **{"rationale-specificity": "Crisp."})).status_code
        == 302
    )
    before = _state(reviewer, idea)
    rating_decline(reviewer=reviewer, idea=idea, reason="Conflict of interest")

    client.post(_undo_url(idea))
    assert _state(reviewer, idea) == before
    assert (
        Rating.objects.get(reviewer=reviewer, idea=idea, dimension__key="specificity").rationale
        == "Crisp."
    )
    assert Assignment.objects.get(reviewer=reviewer, idea=idea).status == "completed"
    restored = RatingHistory.objects.filter(
        rating__dimension__key="market_size", old_status="declined", new_status="scored"
    ).get()
    assert restored.new_score == 1


def test_a_decline_cannot_be_taken_back_once_another_reviewer_is_assigned(
    client_of, reviewer, idea, admin
):
    rating_decline(reviewer=reviewer, idea=idea)
    replacement = ReviewerFactory(username="rosa", profile=[idea.patent.domain])
    assignment_create(reviewer=replacement, idea=idea, actor=admin)

    client = client_of(reviewer)
    assert "Take back" not in client.get(reverse("screening:queue")).content.decode()
    page = client.get(rate_url(idea)).content.decode()
    assert "another reviewer has been assigned this idea" in page
    response = client.post(_undo_url(idea), follow=True)
    assert "The decline cannot be taken back: Another reviewer has been assigned" in (
        response.content.decode()
    )
    assert Assignment.objects.get(reviewer=reviewer, idea=idea).status == "declined"


def test_a_decline_cannot_be_taken_back_twice_or_when_nothing_was_declined(reviewer, idea):
    with pytest.raises(ApplicationError, match="not declined"):
        rating_decline_undo(reviewer=reviewer, idea=idea)
    rating_decline(reviewer=reviewer, idea=idea)
    rating_decline_undo(reviewer=reviewer, idea=idea)
    with pytest.raises(ApplicationError, match="not declined"):
        rating_decline_undo(reviewer=reviewer, idea=idea)


def test_only_the_reviewer_who_declined_can_take_it_back(
    client_of, reviewer, other_reviewer, outsider, manager, admin, idea
):
    rating_decline(reviewer=reviewer, idea=idea)
    assert client_of(outsider).post(_undo_url(idea)).status_code == 404
    assert client_of(manager).post(_undo_url(idea)).status_code == 403
    assert client_of(admin).post(_undo_url(idea)).status_code == 403
    # otto's own assignment is not declined: his request changes nothing of rita's.
    client_of(other_reviewer).post(_undo_url(idea))
    assert Assignment.objects.get(reviewer=reviewer, idea=idea).status == "declined"


def test_a_rating_submitted_after_a_decline_is_refused_but_a_reverted_decline_can_be_rated(
    reviewer, idea
):
    rating_decline(reviewer=reviewer, idea=idea)
    with pytest.raises(ApplicationError):
        rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 2})
    rating_decline_undo(reviewer=reviewer, idea=idea)
    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 2})
    assert _state(reviewer, idea)["specificity"] == ("scored", 2)
