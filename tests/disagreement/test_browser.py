import pytest

from tests.disagreement.conftest import compute_snapshot, plant_ratings
from tests.factories import DomainFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHARTS = {
    "/disagreement/": ["chart-overview"],
    "/disagreement/strictness/": ["chart-strictness"],
    "/disagreement/agreement/": ["chart-heatmap"],
    "/disagreement/panel/": ["chart-panel"],
    "/disagreement/contested/": ["chart-contested"],
    "/disagreement/split/": ["chart-split-alpha", "chart-split-jaccard"],
}


@pytest.fixture
def computed(db):
    nlp = DomainFactory(key="nlp", name="NLP")
    chem = DomainFactory(key="materials", name="Materials Chemistry")
    plant_ratings(domains=[nlp, chem], n_ideas=30, n_reviewers=8)
    return compute_snapshot()


def test_a_manager_sees_every_dashboard_drawn(page, login, manager, computed):
    login(manager)
    for path, canvases in CHARTS.items():
        page.goto(path)
        page.wait_for_load_state("networkidle")
        for canvas in canvases:
            selector = f"canvas#{canvas}"
            assert page.evaluate(
                f"Chart.getChart(document.querySelector('{selector}')) !== undefined"
            ), path
            box = page.locator(selector).bounding_box()
            assert box and box["width"] > 100 and box["height"] > 100, (path, box)
        name = path.strip("/").replace("/", "-")
        page.screenshot(path=f"/tmp/h6-{name}.png", full_page=True)
    idea_id = computed.result["contested"][0]["idea_id"]
    page.goto(f"/disagreement/ideas/{idea_id}/")
    assert page.locator("h2", has_text="Innovativeness").count() == 1
    page.screenshot(path="/tmp/h6-idea.png", full_page=True)


def test_the_recompute_button_shows_progress_without_a_worker(page, login, manager, computed):
    login(manager)
    page.goto("/disagreement/")
    page.click("button:has-text('Recompute now')")
    page.wait_for_selector("#metrics-progress .progress")
    assert "waiting for a worker" in page.inner_text("#metrics-progress")
    from tests.workers import purge_queue

    purge_queue()


def test_a_reviewer_is_refused_the_dashboards(page, login, computed):
    from apps.accounts.models import User

    rita = User.objects.get(username="nlp-rev0")
    login(rita)
    for path in CHARTS:
        response = page.goto(path)
        assert response.status == 403
        assert page.locator("h1", has_text="Not allowed").count() == 1


def test_the_changed_dashboards_look_finished(page, login, manager, computed):
    """Screenshots of every changed page as the manager (looked at by hand)."""
    login(manager)
    shots = {
        "overview": "/disagreement/?domain=nlp",
        "overview-dim": "/disagreement/?dimension=need_validity",
        "agreement": "/disagreement/agreement/?domain=nlp&dimension=innovativeness",
        "panel": "/disagreement/panel/",
        "contested": "/disagreement/contested/",
        "split": "/disagreement/split/",
        "strictness": "/disagreement/strictness/",
    }
    for name, path in shots.items():
        response = page.goto(path)
        assert response.status == 200, path
        page.wait_for_load_state("networkidle")
        page.screenshot(path=f"/tmp/mux-{name}.png", full_page=True)
    page.goto("/disagreement/contested/")
    page.locator("#contested-order").scroll_into_view_if_needed()
    page.screenshot(path="/tmp/mux-contested-top.png")
    page.locator("#category-split").scroll_into_view_if_needed()
    page.screenshot(path="/tmp/mux-contested-split.png")
    page.goto("/disagreement/agreement/?domain=nlp&dimension=innovativeness")
    assert page.locator("#pairs-most tbody tr").count() >= 1
    page.goto("/disagreement/panel/")
    assert "ICC(1)" in page.inner_text("#panel-table thead")
    page.goto("/disagreement/?categories=include")
    assert "No metrics computed yet" in page.inner_text(".dz-fresh")
