"""Every CSV export neutralises spreadsheet formulas the OWASP way (apps/core/csv_export.py):
a text cell starting with =, +, - or @ comes out prefixed with a single quote; numbers stay
numbers."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from apps.screening.services.ratings import rating_submit
from tests.disagreement.conftest import compute_snapshot, plant_ratings
from tests.factories import DomainFactory, IdeaFactory

FORMULAS = ("=", "+", "-", "@")


def _rows(response) -> list[list[str]]:
    body = (
        b"".join(response.streaming_content) if response.streaming else response.content
    ).decode()
    return list(csv.reader(io.StringIO(body)))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _live_formulas(rows: list[list[str]]) -> list[str]:
    return [c for row in rows for c in row if c.startswith(FORMULAS) and not _is_number(c)]


def test_it_neutralises_rationales_and_titles_in_the_ratings_export(client, manager, reviewer):
    idea = IdeaFactory(
        patent__domain=reviewer.reviewer_profile.domains.get(),
        title='=HYPERLINK("http://evil.example","click")',
        external_id="+idea-1",
    )
    from tests.factories import AssignmentFactory

    AssignmentFactory(reviewer=reviewer, idea=idea)
    rating_submit(
        reviewer=reviewer,
        idea=idea,
        scores={"specificity": 2},
        rationales={"specificity": "@SUM(1+1)*cmd|' /C calc'!A0"},
    )
    client.force_login(manager)
    rows = _rows(client.get("/screening/ratings.csv"))
    cells = [c for row in rows for c in row]
    assert _live_formulas(rows) == []
    assert '\'=HYPERLINK("http://evil.example","click")' in cells
    assert "'+idea-1" in cells
    assert "'@SUM(1+1)*cmd|' /C calc'!A0" in cells
    # Scores are still numbers, not quoted text.
    assert "2" in cells


@pytest.mark.parametrize("kind", ["grid", "strictness", "pairwise", "panel", "contested", "split"])
def test_it_neutralises_every_disagreement_export(client, manager, kind):
    # The domain key shows in every export; ideas and reviewers are named after it.
    hostile = DomainFactory(key="-cmd", name="=1+1")
    plant_ratings(domains=[hostile], n_ideas=12, n_reviewers=4)
    compute_snapshot()
    client.force_login(manager)
    # The by-background split is per domain: name the hostile one so its rows carry its key.
    query = "?domain=-cmd" if kind == "split" else ""
    response = client.get(reverse("disagreement:export", args=[kind]) + query)
    assert response.status_code == 200
    rows = _rows(response)
    assert _live_formulas(rows) == []
    if len(rows) > 1:
        assert any(c.startswith("'-cmd") for row in rows[1:] for c in row), rows[:3]


def test_it_neutralises_the_decide_export(client, manager):
    from tests.decisions.conftest import compute_decisions

    hostile = DomainFactory(key="-cmd", name="=1+1")
    plant_ratings(domains=[hostile], n_ideas=12, n_reviewers=4)
    compute_decisions()
    client.force_login(manager)
    response = client.get(reverse("decisions:export") + "?domain=-cmd")
    assert response.status_code == 200
    rows = _rows(response)
    assert _live_formulas(rows) == []
    assert any(c.startswith("'-cmd") for row in rows[1:] for c in row), rows[:3]
