"""The ratings API: a reviewer's own rating of an assigned idea, gates, history, blind review."""

import pytest
from rest_framework.test import APIClient

from apps.screening.models import Assignment, Rating, RatingHistory
from apps.screening.services.ratings import rating_submit

FULL = {
    "specificity": 4,
    "technical_validity": 3,
    "innovativeness": 2,
    "need_validity": 2,
    "market_size": 1,
}
ANSWERS = {"competitive_advantage": {"hard_to_imitate": True, "technology_essential": False}}


@pytest.fixture
def api():
    def _api(user=None):
        client = APIClient()
        if user is not None:
            client.force_login(user)
        return client

    return _api


def _url(idea):
    return f"/api/ideas/{idea.pk}/my-rating/"


def _states(reviewer, idea):
    return {
        r.dimension.key: (r.status, r.score)
        for r in Rating.objects.filter(reviewer=reviewer, idea=idea).select_related("dimension")
    }


def test_a_reviewer_submits_a_complete_rating_through_the_api(api, reviewer, idea):
    response = api(reviewer).put(
        _url(idea),
        {"scores": FULL, "answers": ANSWERS, "rationales": {"specificity": "Clear kit."}},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["assignment_status"] == "completed"
    assert body["scores"]["competitive_advantage"] == 3
    assert body["rationales"] == {"specificity": "Clear kit."}
    assert set(Rating.objects.filter(reviewer=reviewer).values_list("source", flat=True)) == {"api"}
    assert Assignment.objects.get(reviewer=reviewer, idea=idea).status == "completed"


def test_post_works_like_put(api, reviewer, idea):
    response = api(reviewer).post(_url(idea), {"scores": {"specificity": 1}}, format="json")
    assert response.status_code == 200
    assert _states(reviewer, idea)["specificity"] == ("scored", 1)


def test_specificity_at_its_threshold_closes_the_later_stages(api, reviewer, idea):
    # Specificity passes only above 2: a 2 closes every other stage.
    response = api(reviewer).put(_url(idea), {"scores": {"specificity": 2}}, format="json")
    assert response.status_code == 200
    states = _states(reviewer, idea)
    assert states.pop("specificity") == ("scored", 2)
    assert set(states.values()) == {("gated", None)}
    assert response.json()["open_dimensions"] == ["specificity"]


def test_specificity_just_above_its_threshold_requires_the_next_stage(api, reviewer, idea):
    response = api(reviewer).put(_url(idea), {"scores": {"specificity": 3}}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "The rating was not saved."
    assert {e["field"] for e in body["errors"]} == {
        "technical_validity",
        "need_validity",
        "market_size",
    }
    assert all(e["message"] == "is required at this stage" for e in body["errors"])
    assert not Rating.objects.exists()


def test_technical_validity_at_its_threshold_closes_novelty_and_advantage(api, reviewer, idea):
    scores = {"specificity": 3, "technical_validity": 1, "need_validity": 2, "market_size": 0}
    response = api(reviewer).put(_url(idea), {"scores": scores}, format="json")
    assert response.status_code == 200, response.json()
    states = _states(reviewer, idea)
    assert states["innovativeness"] == states["competitive_advantage"] == ("gated", None)
    assert states["market_size"] == ("scored", 0)


def test_technical_validity_above_its_threshold_opens_novelty_and_advantage(api, reviewer, idea):
    scores = {"specificity": 3, "technical_validity": 2, "need_validity": 2, "market_size": 0}
    response = api(reviewer).put(_url(idea), {"scores": scores}, format="json")
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {
        "innovativeness",
        "competitive_advantage",
    }


def test_it_refuses_a_score_for_a_closed_stage(api, reviewer, idea):
    response = api(reviewer).put(
        _url(idea), {"scores": {"specificity": 1, "market_size": 2}}, format="json"
    )
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "market_size"
    assert error["value"] == "2"
    assert error["message"].startswith("must be left empty")
    assert "Specificity is above 2" in error["message"]


def test_it_refuses_a_score_off_the_scale_naming_the_value(api, reviewer, idea):
    response = api(reviewer).put(_url(idea), {"scores": {"specificity": 0}}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "specificity", "message": "must be between 1 and 4", "row": None, "value": "0"}
    ]


def test_it_refuses_a_score_that_is_not_a_number(api, reviewer, idea):
    response = api(reviewer).put(_url(idea), {"scores": {"specificity": "high"}}, format="json")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["field"], error["value"]) == ("scores.specificity", "high")


def test_it_refuses_a_body_without_scores(api, reviewer, idea):
    response = api(reviewer).put(_url(idea), {"answers": {}}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "scores"


def test_it_refuses_answers_that_contradict_the_score(api, reviewer, idea):
    scores = dict(FULL, competitive_advantage=1)
    response = api(reviewer).put(_url(idea), {"scores": scores, "answers": ANSWERS}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "competitive_advantage"


def test_an_edit_that_lowers_specificity_closes_the_later_stages_and_keeps_history(
    api, reviewer, idea
):
    client = api(reviewer)
    assert (
        client.put(_url(idea), {"scores": FULL, "answers": ANSWERS}, format="json").status_code
        == 200
    )
    response = client.put(_url(idea), {"scores": {"specificity": 1}}, format="json")
    assert response.status_code == 200
    states = _states(reviewer, idea)
    assert states.pop("specificity") == ("scored", 1)
    assert set(states.values()) == {("gated", None)}
    market = Rating.objects.get(reviewer=reviewer, dimension__key="market_size")
    history = client.get(f"/api/ratings/{market.pk}/history/").json()
    assert [(h["old_status"], h["old_score"], h["new_status"]) for h in history] == [
        ("", None, "scored"),
        ("scored", 1, "gated"),
    ]
    assert {h["source"] for h in history} == {"api"}


def test_a_reviewer_reads_back_only_their_own_rating(api, reviewer, other_reviewer, idea):
    rating_submit(reviewer=other_reviewer, idea=idea, scores={"specificity": 1})
    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 2})
    body = api(reviewer).get(_url(idea)).json()
    assert body["scores"]["specificity"] == 2
    assert {r["reviewer_username"] for r in body["ratings"]} == {"rita"}


def test_a_reviewer_cannot_read_another_reviewers_rating_or_its_history(
    api, reviewer, other_reviewer, idea
):
    rating_submit(reviewer=other_reviewer, idea=idea, scores={"specificity": 1})
    theirs = Rating.objects.get(reviewer=other_reviewer, dimension__key="specificity")
    client = api(reviewer)
    assert client.get(f"/api/ratings/{theirs.pk}/").status_code == 404
    assert client.get(f"/api/ratings/{theirs.pk}/history/").status_code == 404
    listed = client.get("/api/ratings/", {"reviewer": "otto"}).json()
    assert listed["count"] == 0
    assert client.get("/api/ratings/").json()["count"] == 0


def test_a_reviewer_cannot_write_a_rating_for_an_idea_not_assigned_to_them(
    api, idea, domain, outsider
):
    from tests.factories import ReviewerFactory

    colleague = ReviewerFactory(username="nina", profile=[domain])  # NLP, but not assigned
    response = api(colleague).put(_url(idea), {"scores": {"specificity": 1}}, format="json")
    assert response.status_code == 403
    assert response.json() == {"detail": "This idea is not assigned to you.", "errors": []}
    assert api(colleague).get(_url(idea)).status_code == 403
    # A reviewer of another domain does not even learn that the idea exists.
    assert (
        api(outsider).put(_url(idea), {"scores": {"specificity": 1}}, format="json").status_code
        == 404
    )
    assert not Rating.objects.exists()


def test_another_reviewers_put_never_touches_my_rating(api, reviewer, other_reviewer, idea):
    api(reviewer).put(_url(idea), {"scores": {"specificity": 2}}, format="json")
    api(other_reviewer).put(_url(idea), {"scores": {"specificity": 1}}, format="json")
    assert _states(reviewer, idea)["specificity"] == ("scored", 2)
    assert _states(other_reviewer, idea)["specificity"] == ("scored", 1)


def test_managers_read_every_rating_with_filters_but_cannot_write(
    api, manager, reviewer, other_reviewer, idea
):
    rating_submit(reviewer=other_reviewer, idea=idea, scores={"specificity": 1})
    rating_submit(reviewer=reviewer, idea=idea, scores=FULL, answers=ANSWERS)
    client = api(manager)
    assert client.get("/api/ratings/").json()["count"] == 12
    assert client.get("/api/ratings/", {"reviewer": "otto"}).json()["count"] == 6
    assert (
        client.get("/api/ratings/", {"reviewer": reviewer.pk, "dimension": "specificity"}).json()[
            "count"
        ]
        == 1
    )
    assert client.get("/api/ratings/", {"domain": "nlp", "status": "gated"}).json()["count"] == 5
    assert (
        client.get("/api/ratings/", {"idea": idea.pk, "domain": "materials"}).json()["count"] == 0
    )
    assert client.put(_url(idea), {"scores": {"specificity": 1}}, format="json").status_code == 403
    assert client.post("/api/ratings/", {}, format="json").status_code == 403
    assert client.post(f"/api/ideas/{idea.pk}/decline/", {}, format="json").status_code == 403
    assert _states(reviewer, idea)["specificity"] == ("scored", 4)


def test_declining_through_the_api_blocks_later_ratings(api, reviewer, idea):
    client = api(reviewer)
    response = client.post(
        f"/api/ideas/{idea.pk}/decline/", {"reason": "Not my field"}, format="json"
    )
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["decline_reason"]) == (
        "declined",
        "Not my field",
    )
    assert set(s for s, _ in _states(reviewer, idea).values()) == {"declined"}
    refused = client.put(_url(idea), {"scores": {"specificity": 1}}, format="json")
    assert refused.status_code == 400
    assert "declined" in refused.json()["detail"]


def test_submitting_the_same_body_twice_writes_history_once(api, reviewer, idea):
    client = api(reviewer)
    for _ in range(2):
        assert (
            client.put(_url(idea), {"scores": FULL, "answers": ANSWERS}, format="json").status_code
            == 200
        )
    assert RatingHistory.objects.count() == 6


def test_an_optional_dimension_left_null_through_the_api_is_stored_as_not_answered(
    api, reviewer, idea
):
    from apps.screening.models import Dimension

    Dimension.objects.filter(key="market_size").update(optional=True)
    scores = {**FULL, "market_size": None}
    response = api(reviewer).put(_url(idea), {"scores": scores, "answers": ANSWERS}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["statuses"]["market_size"] == "unanswered"
    assert _states(reviewer, idea)["market_size"] == ("unanswered", None)
    # A required one left null is still refused, naming it.
    refused = api(reviewer).put(
        _url(idea),
        {"scores": {**scores, "need_validity": None}, "answers": ANSWERS},
        format="json",
    )
    assert refused.status_code == 400
    assert [e["field"] for e in refused.json()["errors"]] == ["need_validity"]


def test_a_submit_answers_with_the_stored_screening_without_reading_it_twice(
    api, reviewer, idea, django_assert_max_num_queries
):
    client = api(reviewer)
    client.put(_url(idea), {"scores": {"specificity": 1}}, format="json")
    # Session, idea, assignment lock, rubric, dimensions, the storage statements, the stored
    # ratings and the savepoints: the response is built from what the write read, not read again
    # (which took 25 queries).
    with django_assert_max_num_queries(18):
        response = client.put(_url(idea), {"scores": FULL, "answers": ANSWERS}, format="json")
    assert response.status_code == 200
    assert response.json() == client.get(_url(idea)).json()
