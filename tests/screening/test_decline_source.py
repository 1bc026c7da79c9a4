"""A decline records where it came from: the form by default, "api" through the REST API."""

from rest_framework.test import APIClient

from apps.screening.models import Rating, RatingHistory
from apps.screening.services.ratings import rating_decline, rating_submit


def _sources(reviewer, idea):
    return set(Rating.objects.filter(reviewer=reviewer, idea=idea).values_list("source", flat=True))


def test_a_decline_from_the_form_is_recorded_as_form(reviewer, idea):
    rating_decline(reviewer=reviewer, idea=idea, reason="outside my expertise")
    assert _sources(reviewer, idea) == {"form"}
    assert set(
        RatingHistory.objects.filter(rating__reviewer=reviewer).values_list("source", flat=True)
    ) == {"form"}


def test_a_decline_with_an_explicit_source_is_recorded_with_it(reviewer, idea):
    rating_decline(reviewer=reviewer, idea=idea, source=Rating.Source.IMPORT)
    assert _sources(reviewer, idea) == {"import"}


def test_a_decline_through_the_api_is_recorded_as_api_on_every_rating_and_history_row(
    reviewer, idea
):
    # A prior form rating: the decline must overwrite its source, and its history row say "api".
    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 1})
    client = APIClient()
    client.force_login(reviewer)
    response = client.post(f"/api/ideas/{idea.pk}/decline/", {"reason": "no"}, format="json")
    assert response.status_code == 200
    ratings = Rating.objects.filter(reviewer=reviewer, idea=idea)
    assert ratings.count() == 6
    assert {(r.status, r.source) for r in ratings} == {("declined", "api")}
    latest = RatingHistory.objects.filter(rating__in=ratings, new_status="declined")
    assert latest.count() == 6
    assert set(latest.values_list("source", flat=True)) == {"api"}
