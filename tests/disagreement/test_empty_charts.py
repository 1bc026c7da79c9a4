"""A dashboard page with nothing to draw says why instead of drawing empty axes (issue 21.10).

Each page gets a finished snapshot with no figures: first with no ratings at all, then with
ratings that give nothing to plot. The canvas (or SVG) must be absent and the reason shown."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.disagreement.models import MetricSnapshot

# page, the chart's element id, and the reason given when there are ratings but nothing to draw
PAGES = [
    ("/disagreement/", "chart-overview", "no dimension has enough rated pairs"),
    ("/disagreement/strictness/", "chart-strictness", "no reviewer has scored these dimensions"),
    ("/disagreement/panel/", "chart-panel", "no dimension has ideas scored by two or more"),
    ("/disagreement/contested/", "chart-contested", "no idea has two or more scores"),
    ("/disagreement/split/", "chart-split", "no group has enough rated pairs"),
]


def _snapshot(n_ratings: int) -> None:
    MetricSnapshot.objects.create(
        scope="ordinal", status="done", result={}, n_ratings=n_ratings, computed_at=timezone.now()
    )


@pytest.mark.django_db
@pytest.mark.parametrize(("url", "chart_id", "reason"), PAGES)
def test_a_page_without_ratings_says_so_instead_of_an_empty_chart(
    client, manager, domain, url, chart_id, reason
):
    _snapshot(0)
    client.force_login(manager)
    html = client.get(url).content.decode()
    assert f'<canvas id="{chart_id}' not in html
    assert f"{chart_id}-data" not in html
    assert f'id="{chart_id}-empty"' in html
    assert "No chart: no ratings yet." in html


@pytest.mark.django_db
@pytest.mark.parametrize(("url", "chart_id", "reason"), PAGES)
def test_a_page_with_ratings_but_no_figure_names_the_reason(
    client, manager, domain, url, chart_id, reason
):
    _snapshot(12)
    client.force_login(manager)
    html = client.get(url).content.decode()
    assert f'<canvas id="{chart_id}' not in html
    assert reason in html


@pytest.mark.django_db
def test_the_agreement_matrix_without_shared_ideas_says_so(client, manager, domain):
    _snapshot(12)
    client.force_login(manager)
    html = client.get("/disagreement/agreement/").content.decode()
    assert '<canvas id="chart-heatmap"' not in html
    assert "No two reviewers share at least two rated ideas" in html


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("url", "chart_id"), [PAGES[1][:2], PAGES[2][:2], PAGES[3][:2]])
def test_the_browser_shows_the_reason_and_no_chart(page, login, manager, domain, url, chart_id):
    _snapshot(0)
    login(manager)
    page.goto(url)
    page.wait_for_load_state("networkidle")
    assert page.locator("canvas").count() == 0
    message = page.locator(f"#{chart_id}-empty")
    assert message.is_visible()
    assert "No chart: no ratings yet" in message.inner_text()
