"""Deciding in a real browser: a manager marks ten ideas, changes one, reads its history and
exports the memo; Decide fits 1,366 px; a reviewer reaches none of it."""

from __future__ import annotations

import re

import pytest

from tests.decisions.conftest import compute_decisions
from tests.disagreement.conftest import plant_ratings
from tests.factories import PASSWORD, DomainFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def decided(db):
    nlp = DomainFactory(key="nlp", name="NLP")
    chem = DomainFactory(key="materials", name="Materials Chemistry")
    plant_ratings(domains=[nlp, chem], n_ideas=30, n_reviewers=5)
    return compute_decisions()


def board_figures(page) -> dict[str, dict[str, str]]:
    """The Decide table as shown: per idea its rank, estimate, interval and P(top N)."""
    out = {}
    rows = page.locator("#board-table tbody tr[data-idea]")
    for i in range(rows.count()):
        row = rows.nth(i)
        out[row.get_attribute("data-idea")] = {
            "estimate": row.locator(".dz-estimate").inner_text().strip(),
            "interval": row.locator(".dz-interval").inner_text().strip(),
            "p_top": row.locator(".dz-ptop").inner_text().strip(),
        }
    return out


def save_mark(page, row, mark: str, note: str) -> None:
    row.locator("select[name=mark]").select_option(mark)
    row.locator("input[name=note]").fill(note)
    row_id = row.get_attribute("id")
    row.locator("button[type=submit]").click()
    page.wait_for_selector(f"#{row_id} [data-mark={mark}]")


def test_a_manager_marks_ten_ideas_changes_one_and_exports_the_memo(page, login, manager, decided):
    login(manager)
    page.goto("/disagreement/")
    page.click("nav.mainnav >> text=Decide")  # Decide is in the main menu
    page.wait_for_selector("#board-table")
    assert page.locator("#board-table tbody tr.dz-in").count() == 10
    assert page.locator("#decide-cut-line").is_visible()
    assert "Shortlist: the top 10 of 30 ideas" in page.locator("#decide-cut-count").inner_text()
    assert page.locator("#decide-below .dz-below").count() == 5
    shown = board_figures(page)

    page.click("#decide-record-link")
    page.wait_for_selector("#marks-table")
    rows = page.locator("#marks-table tbody tr[id^=mark-]")
    top = [rows.nth(i).get_attribute("data-idea") for i in range(10)]
    for i in range(10):
        save_mark(page, rows.nth(i), "take_forward", f"strong on need ({i})")
    page.reload()
    assert page.locator("#marks-table [data-mark=take_forward]").count() == 10
    assert "10 decided · 10 taken forward" in page.locator("#marks-summary").inner_text()

    changed = page.locator(f"#marks-table tr[data-idea='{top[2]}']")
    save_mark(page, changed, "reject", "the patent runs out in 2027")
    changed.locator("a[id^=history-link]").click()
    slot = "#history-" + changed.get_attribute("id").removeprefix("mark-")
    page.wait_for_selector(f"{slot} .dc-history-row")
    history = page.locator(f"{slot} .dc-history-row")
    assert history.count() == 2
    assert "Reject" in history.nth(0).inner_text() and "v2" in history.nth(0).inner_text()
    assert "Take forward" in history.nth(1).inner_text()
    page.screenshot(path="/tmp/decisions-marks.png", full_page=True)

    with page.expect_download() as info:
        page.click("#memo-html")
    memo = open(info.value.path(), encoding="utf-8").read()
    chosen = [i for i in top if i != top[2]]
    assert memo.count('<article class="idea"') == 9
    for idea in chosen:
        block = memo.split(f'data-idea="{idea}"', 1)[1].split("</article>", 1)[0]
        figures = shown[idea]
        assert f'class="m-estimate">{figures["estimate"]}<' in block
        assert f'class="m-interval">{figures["interval"]}<' in block
        assert f'class="m-ptop">{figures["p_top"]}<' in block
    not_taken = memo.split('id="not-taken"', 1)[1]
    assert top[2] in not_taken and "the patent runs out in 2027" in not_taken
    with page.expect_download() as info:
        page.click("#memo-md")
    md = open(info.value.path(), encoding="utf-8").read()
    assert md.startswith("# Decision memo: Materials Chemistry") and md.count("\n### ") == 9
    # The memo reads when printed: render it and print it to PDF through Chromium.
    # The memo is a file of its own (the site's Content-Security-Policy does not apply to it):
    # open it in a fresh context, as printed.
    blank = page.context.browser.new_context(viewport={"width": 900, "height": 1200})
    printed = blank.new_page()
    printed.set_content(memo)
    printed.emulate_media(media="print")
    assert printed.locator("article.idea").count() == 9
    printed.screenshot(path="/tmp/decisions-memo-print.png", full_page=True)
    blank.close()


def test_decide_fits_1366_pixels_with_one_line_per_idea(browser, live_server, manager, decided):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.goto("/accounts/login/")
    page.fill("input[name=username]", manager.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")
    page.goto("/decisions/decide/?domain=materials")
    page.wait_for_selector("#board-table")
    page.screenshot(path="/tmp/decisions-decide-1366.png", full_page=True)
    fits = page.evaluate(
        """() => {
          const box = document.querySelector('.dz-scroll');
          const rows = [...document.querySelectorAll('#board-table tbody tr[data-idea]')];
          return {scroll: box.scrollWidth - box.clientWidth,
                  page: document.documentElement.scrollWidth - window.innerWidth,
                  tallest: Math.max(...rows.map(r => r.getBoundingClientRect().height))};
        }"""
    )
    assert fits["scroll"] <= 0 and fits["page"] <= 0, fits
    assert fits["tallest"] < 64, fits  # a title and its id, never five wrapped lines
    link = page.locator("#board-table tbody tr[data-idea] .dz-title a").first
    assert link.get_attribute("title") == link.inner_text().strip()
    page.goto("/decisions/marks/?domain=materials")
    page.wait_for_selector("#marks-table")
    page.screenshot(path="/tmp/decisions-marks-1366.png", full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert width <= 0
    context.close()


def test_a_reviewer_reaches_none_of_it(page, login, reviewer):
    login(reviewer)
    assert page.locator("nav.mainnav >> text=Decide").count() == 0
    for url in (
        "/decisions/decide/",
        "/decisions/marks/",
        "/decisions/memo/?domain=nlp",
        "/decisions/marks.csv?domain=nlp",
        "/api/decisions/marks/?domain=nlp",
    ):
        response = page.request.get(url)
        assert response.status == 403, url
    page.goto("/decisions/marks/")
    assert re.search(r"403|not allowed|does not give access", page.content(), re.I)
