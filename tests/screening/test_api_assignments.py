"""The assignments API (admins) and the reviewer's own queue."""

import threading
from collections import Counter

import pytest
from django.db import connection
from rest_framework.test import APIClient

from apps.screening.models import Assignment, Rating
from tests.factories import IdeaFactory, PatentFactory, ReviewerFactory


@pytest.fixture
def api():
    def _api(user=None):
        client = APIClient()
        if user is not None:
            client.force_login(user)
        return client

    return _api


def test_admins_run_the_balanced_assignment_through_the_api(api, admin, domain):
    for i in range(5):
        ReviewerFactory(username=f"panel{i}", profile=[domain])
    patent = PatentFactory(domain=domain)
    for _ in range(10):
        IdeaFactory(patent=patent)
    client = api(admin)
    response = client.post(
        "/api/assignments/bulk-balanced/", {"domain": "nlp", "per_idea": 3}, format="json"
    )
    assert response.json() == {"created": 30}
    assert Counter(Assignment.objects.values_list("reviewer__username", flat=True)) == {
        f"panel{i}": 6 for i in range(5)
    }
    assert client.post(
        "/api/assignments/bulk-balanced/", {"domain": "nlp", "per_idea": 3}, format="json"
    ).json() == {"created": 0}
    load = client.get("/api/assignments/load/", {"domain": "nlp"}).json()
    assert {(row["reviewer_username"], row["assigned"], row["pending"]) for row in load} == {
        (f"panel{i}", 6, 6) for i in range(5)
    }


def test_bulk_balanced_reports_bad_input_by_field(api, admin, domain, reviewer):
    client = api(admin)
    unknown = client.post(
        "/api/assignments/bulk-balanced/", {"domain": "nope", "per_idea": 0}, format="json"
    )
    assert unknown.status_code == 400
    assert {(e["field"], e["value"]) for e in unknown.json()["errors"]} == {
        ("domain", "nope"),
        ("per_idea", "0"),
    }
    too_many = client.post(
        "/api/assignments/bulk-balanced/", {"domain": "nlp", "per_idea": 2}, format="json"
    )
    assert too_many.status_code == 400
    assert too_many.json()["errors"][0]["message"] == "NLP has only 1 reviewer(s) to choose from"


def test_admins_create_list_and_delete_assignments(api, admin, reviewer, domain):
    a, b = IdeaFactory(patent__domain=domain), IdeaFactory(patent__domain=domain)
    client = api(admin)
    created = client.post(
        "/api/assignments/", {"reviewer": "rita", "ideas": [a.pk, b.pk]}, format="json"
    )
    assert created.status_code == 201
    assert created.json()["created"] == 2
    again = client.post("/api/assignments/", {"reviewer": "rita", "idea": a.pk}, format="json")
    assert (again.status_code, again.json()["created"]) == (200, 0)
    listed = client.get("/api/assignments/", {"reviewer": reviewer.pk, "status": "pending"}).json()
    assert listed["count"] == 3
    assert {row["assigned_by"] for row in listed["results"]} == {"ada", None}
    one = Assignment.objects.get(reviewer=reviewer, idea=a)
    assert client.delete(f"/api/assignments/{one.pk}/").status_code == 204
    assert client.get(f"/api/assignments/{one.pk}/").status_code == 404


def test_it_refuses_to_assign_an_unqualified_reviewer_through_the_api(api, admin, outsider, idea):
    response = api(admin).post(
        "/api/assignments/", {"reviewer": "oscar", "idea": idea.pk}, format="json"
    )
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["field"], error["value"]) == ("ideas", idea.external_id)
    assert "not qualified" in error["message"]


def test_it_refuses_both_or_neither_idea_fields(api, admin, reviewer, idea):
    client = api(admin)
    neither = client.post("/api/assignments/", {"reviewer": "rita"}, format="json")
    assert neither.status_code == 400
    assert neither.json()["errors"][0]["field"] == "idea"


def test_a_rated_assignment_cannot_be_deleted(api, admin, reviewer, idea):
    from apps.screening.services.ratings import rating_submit

    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 1})
    assignment = Assignment.objects.get(reviewer=reviewer, idea=idea)
    response = api(admin).delete(f"/api/assignments/{assignment.pk}/")
    assert response.status_code == 400
    assert response.json()["errors"][0] == {
        "field": "status",
        "message": "must be pending",
        "row": None,
        "value": "completed",
    }


def test_a_reviewer_lists_only_their_own_queue(api, reviewer, other_reviewer, idea, domain):
    extra = IdeaFactory(patent__domain=domain)
    Assignment.objects.create(reviewer=other_reviewer, idea=extra)
    body = api(reviewer).get("/api/my/assignments/").json()
    assert body["count"] == 1
    assert body["results"][0]["idea"] == idea.pk
    assert (
        api(other_reviewer).get("/api/my/assignments/", {"status": "pending"}).json()["count"] == 2
    )


# serialized_rollback: the flush after a transactional test would otherwise also remove the PBIG
# rubric that migration screening.0002 loaded, and later tests in the session need it.
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_two_simultaneous_puts_of_the_same_rating_both_succeed_and_leave_one_row_per_dimension(
    reviewer, idea
):
    """rating_submit locks the assignment row, so the second request waits and then updates."""
    body = {
        "scores": {
            "specificity": 4,
            "technical_validity": 3,
            "innovativeness": 2,
            "need_validity": 2,
            "market_size": 1,
        },
        "answers": {
            "competitive_advantage": {"hard_to_imitate": True, "technology_essential": True}
        },
    }
    barrier = threading.Barrier(2)
    statuses: list[int] = []
    failures: list[BaseException] = []

    def put() -> None:
        try:
            client = APIClient()
            client.force_login(reviewer)
            barrier.wait()
            statuses.append(
                client.put(f"/api/ideas/{idea.pk}/my-rating/", body, format="json").status_code
            )
        except BaseException as exc:  # surfaced below: a thread's exception would otherwise vanish
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=put) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert failures == []
    assert statuses == [200, 200]
    assert Rating.objects.filter(reviewer=reviewer, idea=idea).count() == 6
    assert Counter(Rating.objects.values_list("dimension_id", flat=True)).most_common(1)[0][1] == 1
