"""The reviewer's queue page: roles, ordering, progress, empty states and a query budget."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.screening.services.ratings import rating_decline, rating_submit
from tests.factories import AssignmentFactory, IdeaFactory

QUEUE = "/screening/"


def test_the_queue_url_is_named_screening_queue():
    assert reverse("screening:queue") == QUEUE


def test_an_anonymous_visitor_is_sent_to_the_login_page(client, db):
    response = client.get(QUEUE)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("persona", ["manager", "admin"])
def test_managers_and_admins_have_no_queue(db, request, client_of, persona):
    assert client_of(request.getfixturevalue(persona)).get(QUEUE).status_code == 403


def test_a_reviewer_without_assignments_sees_a_finished_empty_state(client_of, outsider):
    html = client_of(outsider).get(QUEUE).content.decode()
    assert "Nothing to rate: no ideas are assigned to you yet." in html
    assert "progressbar" not in html


def test_pending_ideas_come_first_then_rated_then_declined_with_progress(
    client_of, reviewer, idea, domain
):
    rated = IdeaFactory(patent__domain=domain, title="Already rated idea")
    declined = IdeaFactory(patent__domain=domain, title="Declined idea")
    AssignmentFactory(reviewer=reviewer, idea=rated)
    AssignmentFactory(reviewer=reviewer, idea=declined)
    rating_submit(reviewer=reviewer, idea=rated, scores={"specificity": 1})
    rating_decline(reviewer=reviewer, idea=declined, reason="Outside my field")

    html = client_of(reviewer).get(QUEUE).content.decode()
    assert html.index(idea.title) < html.index("Already rated idea") < html.index("Declined idea")
    assert "2 of 3 done" in html and "1 remaining" in html
    assert 'style="width: 67%"' in html
    assert idea.patent.title in html and domain.name in html
    assert f'href="{reverse("screening:rate", kwargs={"idea_id": idea.id})}">Rate</a>' in html
    assert f'href="{reverse("screening:rate", kwargs={"idea_id": rated.id})}">Edit</a>' in html
    assert "Outside my field" in html


def test_a_finished_queue_says_so_and_keeps_ratings_editable(client_of, reviewer, idea):
    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 2})
    html = client_of(reviewer).get(QUEUE).content.decode()
    assert "Nothing to rate: you have finished every idea assigned to you." in html
    assert "1 of 1 done" in html and ">Edit</a>" in html


def test_a_reviewer_sees_only_their_own_assignments(client_of, reviewer, other_reviewer, domain):
    theirs = IdeaFactory(patent__domain=domain, title="Only for Otto")
    AssignmentFactory(reviewer=other_reviewer, idea=theirs)
    assert "Only for Otto" not in client_of(reviewer).get(QUEUE).content.decode()


@pytest.mark.parametrize("extra", [3, 12])
def test_the_queue_costs_the_same_few_queries_however_long_it_is(
    client_of, reviewer, domain, django_assert_num_queries, extra
):
    for n in range(extra):
        assignment = AssignmentFactory(reviewer=reviewer, idea=IdeaFactory(patent__domain=domain))
        if n % 3 == 1:
            rating_submit(reviewer=reviewer, idea=assignment.idea, scores={"specificity": 1})
        elif n % 3 == 2:
            rating_decline(reviewer=reviewer, idea=assignment.idea)
    client = client_of(reviewer)
    # session, user, assignments with idea, patent and domain joined; when each rating was made
    # and last changed by the reviewer; then three for which declines can still be taken back
    # (decline times, later changes, later assignments).
    with django_assert_num_queries(7):
        assert client.get(QUEUE).status_code == 200
