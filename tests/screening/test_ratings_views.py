"""The managers' read-only ratings table and its CSV export."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from apps.screening.models import Rating
from apps.screening.services.ratings import rating_decline, rating_submit
from tests.factories import AssignmentFactory, IdeaFactory, ReviewerFactory

TABLE = "/screening/ratings/"
CSV = "/screening/ratings.csv"


@pytest.fixture
def rated(reviewer, other_reviewer, idea):
    """Rita stops at specificity 2 (five dimensions gated); Otto declines."""
    rating_submit(
        reviewer=reviewer,
        idea=idea,
        scores={"specificity": 2},
        rationales={"specificity": "Vague product"},
    )
    rating_decline(reviewer=other_reviewer, idea=idea, reason="not my field")


def _csv(response) -> list[list[str]]:
    body = b"".join(response.streaming_content).decode()
    return list(csv.reader(io.StringIO(body)))


def test_the_urls_are_named():
    assert reverse("screening:ratings") == TABLE
    assert reverse("screening:ratings_csv") == CSV


def test_an_anonymous_visitor_is_sent_to_the_login_page(client, db):
    for url in (TABLE, CSV):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("persona", ["reviewer", "outsider"])
def test_reviewers_are_refused(db, request, client_of, persona):
    client = client_of(request.getfixturevalue(persona))
    assert client.get(TABLE).status_code == 403
    assert client.get(CSV).status_code == 403
    assert client.get(TABLE + "?format=csv").status_code == 403


@pytest.mark.parametrize("persona", ["manager", "admin"])
def test_managers_and_admins_read_every_rating_with_status_names(
    request, client_of, rated, persona
):
    response = client_of(request.getfixturevalue(persona)).get(TABLE)
    html = response.content.decode()
    assert response.status_code == 200
    assert "12 ratings" in html
    assert html.count("Not rated by design</span>") == 5
    assert html.count("Declined</span>") == 6
    assert "Vague product" in html and "Rita" in html and "Otto" in html


def test_the_table_offers_no_way_to_edit(client_of, manager, rated):
    html = client_of(manager).get(TABLE).content.decode()
    assert html.count('method="post"') == 1  # the log-out button only


@pytest.mark.parametrize(
    ("query", "count"),
    [
        ("status=gated", 5),
        ("status=declined", 6),
        ("status=scored", 1),
        ("dimension=specificity", 2),
        ("dimension=market_size&status=gated", 1),
        ("domain={domain}", 12),
        ("domain={other}", 0),
        ("reviewer={otto}", 6),
    ],
)
def test_filters_narrow_the_table(
    client_of, manager, rated, domain, other_domain, other_reviewer, query, count
):
    query = query.format(domain=domain.id, other=other_domain.id, otto=other_reviewer.id)
    html = client_of(manager).get(f"{TABLE}?{query}").content.decode()
    assert f"{count} rating{'' if count == 1 else 's'}" in html
    if count == 0:
        assert "No ratings match these filters." in html


def test_a_bad_filter_value_is_named(client_of, manager, rated):
    html = client_of(manager).get(TABLE + "?status=bogus").content.decode()
    assert "Status: Select a valid choice." in html


def test_the_table_is_paginated_and_keeps_the_filters(client_of, manager, domain):
    for _ in range(9):  # 9 ideas x 6 dimensions = 54 ratings, 50 a page
        reviewer = ReviewerFactory(profile=[domain])
        idea = IdeaFactory(patent__domain=domain)
        AssignmentFactory(reviewer=reviewer, idea=idea)
        rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 1})
    client = client_of(manager)
    html = client.get(TABLE + "?status=gated").content.decode()
    assert "45 ratings" in html  # 9 x 5 gated fit on one page
    html = client.get(TABLE).content.decode()
    assert "page 1 of 2" in html and "?page=2" in html
    assert "page 2 of 2" in client.get(TABLE + "?page=2").content.decode()
    assert "status=gated&amp;page=2" not in html


def test_the_csv_export_streams_every_matching_row(client_of, manager, rated):
    client = client_of(manager)
    response = client.get(CSV)
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    rows = _csv(response)
    assert rows[0][:3] == ["reviewer", "domain", "patent"]
    assert len(rows) == 13
    gated = [r for r in _csv(client.get(TABLE + "?format=csv&status=gated")) if r[0] != "reviewer"]
    assert (
        len(gated) == 5
        and {r[7] for r in gated} == {"Not rated by design"}
        and {r[8] for r in gated} == {""}
    )


def test_the_csv_keeps_advantage_answers(client_of, manager, reviewer, idea):
    rating_submit(
        reviewer=reviewer,
        idea=idea,
        scores={
            "specificity": 4,
            "technical_validity": 3,
            "innovativeness": 2,
            "need_validity": 0,
            "market_size": 1,
        },
        answers={"competitive_advantage": {"hard_to_imitate": False, "technology_essential": True}},
    )
    rows = _csv(client_of(manager).get(CSV + "?dimension=competitive_advantage"))
    assert rows[1][8:10] == ["2", "hard_to_imitate=no;technology_essential=yes"]


def test_the_table_costs_a_fixed_number_of_queries(
    client_of, manager, rated, django_assert_num_queries
):
    client = client_of(manager)
    # session, user, count, page of rows, filter choices: domains, dimensions, reviewers.
    with django_assert_num_queries(7):
        client.get(TABLE)
    assert Rating.objects.count() == 12
