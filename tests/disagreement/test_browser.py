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


@pytest.fixture
def with_prediction(computed):
    """One unread NLP idea predicted for nlp-rev0, then the snapshot recomputed."""
    from django.utils import timezone

    from apps.accounts.models import User
    from apps.catalog.models import Idea
    from apps.judges.models import JudgeConfig, JudgeFinal, JudgeRun
    from apps.screening.models import Dimension

    rev0 = User.objects.get(username="nlp-rev0")
    patent = Idea.objects.filter(patent__domain__key="nlp").first().patent
    unread = Idea.objects.create(
        external_id="nlp-UNREAD", patent=patent, title="Quokka: contract clause translation"
    )
    run = JudgeRun.objects.create(
        purpose=JudgeRun.Purpose.PREDICTION,
        domain=patent.domain,
        reviewer=rev0,
        dimensions=["innovativeness"],
        scope_key="prediction|browser",
        status=JudgeRun.Status.DONE,
        finished_at=timezone.now(),
    )
    JudgeFinal.objects.create(
        run=run,
        kind=JudgeConfig.Kind.PERSONALIZED,
        k=9,
        reviewer=rev0,
        idea=unread,
        dimension=Dimension.objects.get(rubric__is_default=True, key="innovativeness"),
        score=5,
        confidence=91,
        kept=3,
    )
    return compute_snapshot()


def test_a_manager_searches_sorts_and_exports_the_decide_board(
    page, login, manager, with_prediction
):
    login(manager)
    page.goto("/disagreement/decide/?domain=nlp")
    assert page.locator("#board-table tbody tr").count() == 31
    page.screenshot(path="/tmp/mux-decide.png", full_page=True)

    page.fill("#board-search", "quokka")
    page.click("button:has-text('Show')")
    page.wait_for_load_state("networkidle")
    rows = page.locator("#board-table tbody tr")
    assert rows.count() == 1 and "Quokka" in rows.first.inner_text()
    assert "1 of 31 ideas match" in page.inner_text("#board-summary")

    page.goto("/disagreement/decide/?domain=nlp&dimension=innovativeness")
    page.select_option("#board-sort", "predicted")
    page.click("button:has-text('Show')")
    page.wait_for_load_state("networkidle")
    first = page.locator("#board-table tbody tr").first.inner_text()
    assert "Quokka" in first and "nlp-rev0 5" in first and "@91%" in first
    assert "predicted score, highest first" in page.inner_text("#board-summary")
    page.screenshot(path="/tmp/mux-decide-predicted.png", full_page=True)

    with page.expect_download() as info:
        page.click("#decide-export")
    text = open(info.value.path(), encoding="utf-8").read()
    header, first_row = text.splitlines()[:2]
    assert header.startswith("rank,idea,title,domain,dimension")
    assert first_row.startswith(
        "1,nlp-UNREAD,Quokka: contract clause translation,nlp,innovativeness"
    )

    page.goto("/disagreement/decide/?domain=nlp&sort=agreement")
    spreads = page.locator("#board-table tbody tr td:nth-child(5)").all_inner_texts()
    values = [float(v) for v in spreads if v.strip() not in ("—", "")]
    assert values == sorted(values) and len(values) >= 25


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
