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
