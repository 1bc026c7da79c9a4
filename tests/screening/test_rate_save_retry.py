"""The rating form's background save (static/js/save-retry.js) against the view: the redirect
after a save comes back as a header the script follows; a save sent again stores nothing twice."""

from __future__ import annotations

from apps.screening.models import Rating, RatingHistory
from tests.screening.conftest import FULL_FORM, rate_url

RETRY = {"X-Save-Retry": "0"}


def test_a_background_save_gets_where_to_go_in_a_header_instead_of_a_redirect(
    client_of, reviewer, idea, pbig_rubric
):
    client = client_of(reviewer)
    response = client.post(rate_url(idea), {**FULL_FORM, "action": "submit"}, headers=RETRY)
    assert response.status_code == 204
    assert response["X-Save-Retry-Location"] == "/screening/"
    # The "Saved" message waits for the page the script then opens.
    assert "Saved your rating of" in client.get("/screening/").content.decode()


def test_a_normal_submit_still_redirects(client_of, reviewer, idea, pbig_rubric):
    response = client_of(reviewer).post(rate_url(idea), {**FULL_FORM, "action": "submit"})
    assert response.status_code == 302 and response["Location"] == "/screening/"


def test_a_save_sent_again_after_it_was_stored_stores_nothing_twice(
    client_of, reviewer, idea, pbig_rubric
):
    client = client_of(reviewer)
    for attempt in ("0", "1", "2"):
        response = client.post(
            rate_url(idea), {**FULL_FORM, "action": "submit"}, headers={"X-Save-Retry": attempt}
        )
        assert response.status_code == 204
    ratings = Rating.objects.filter(reviewer=reviewer, idea=idea)
    assert ratings.count() == 6
    assert RatingHistory.objects.filter(rating__in=ratings).count() == 6


def test_a_background_save_with_a_missing_score_gets_the_form_back_with_the_error(
    client_of, reviewer, idea, pbig_rubric
):
    data = {k: v for k, v in FULL_FORM.items() if k != "score-market_size"}
    response = client_of(reviewer).post(rate_url(idea), {**data, "action": "submit"}, headers=RETRY)
    assert response.status_code == 422
    assert 'id="rating-form"' in response.content.decode()
    assert not Rating.objects.filter(reviewer=reviewer, idea=idea).exists()
