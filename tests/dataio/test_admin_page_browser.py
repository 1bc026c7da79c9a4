"""An admin uploads files on the Data & imports page in a real browser (htmx swaps the panel)."""

from __future__ import annotations

import pytest

from apps.catalog.models import Patent
from tests.dataio.conftest import EXAMPLES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_dry_runs_then_imports_and_sees_errors_in_place(page, login, admin, tmp_path):
    login(admin)
    page.goto("/catalog/admin/")
    assert page.title().startswith("Data & imports")
    panel = page.locator("#import-patents")

    panel.locator("input[type=file]").set_input_files(str(EXAMPLES / "patents.csv"))
    panel.locator("input[name=dry_run]").check()
    panel.get_by_role("button", name="Import patents").click()
    page.locator("#import-patents .msg-success").wait_for()
    assert (
        "nothing saved: would be 4 created"
        in page.locator("#import-patents .msg-success").inner_text()
    )
    assert Patent.objects.count() == 0

    panel = page.locator("#import-patents")
    panel.locator("input[type=file]").set_input_files(str(EXAMPLES / "patents.csv"))
    panel.get_by_role("button", name="Import patents").click()
    page.locator("#import-patents .msg-success", has_text="Imported patents").wait_for()
    assert Patent.objects.count() == 4

    bad = tmp_path / "ideas.csv"
    bad.write_text("external_id,patent,title\nidea-1,US404,Lost idea\n", encoding="utf-8")
    ideas = page.locator("#import-ideas")
    ideas.locator("input[type=file]").set_input_files(str(bad))
    ideas.get_by_role("button", name="Import ideas").click()
    row = page.locator("#import-ideas .catalog-error-table tbody tr").first
    row.wait_for()
    cells = row.locator("td").all_inner_texts()
    assert cells[0] == "2" and cells[1] == "patent" and cells[3] == "US404"
    # The other panels are untouched by the swap.
    assert page.locator("#import-patents .msg-success").count() == 1


def test_an_admin_reads_a_format_and_downloads_its_example_from_the_import_page(page, login, admin):
    login(admin)
    page.goto("/catalog/admin/")
    page.screenshot(path="/tmp/rux-import-page.png", full_page=True)
    with page.expect_download() as download:
        page.locator("#import-ratings").get_by_role("link", name="ratings.csv").click()
    assert download.value.suggested_filename == "ratings.csv"
    assert (EXAMPLES / "ratings.csv").read_bytes() == open(download.value.path(), "rb").read()

    page.locator("#format-ratings").click()
    assert page.locator("h1").inner_text() == "Ratings: import format"
    assert page.locator("#format-doc table").count() >= 1
    page.screenshot(path="/tmp/rux-format-ratings.png", full_page=True)
    page.get_by_role("link", name="Rubric files").click()
    assert page.locator("h1").inner_text() == "Rubric files: import format"
    page.get_by_role("link", name="← Data & imports").click()
    assert page.url.endswith("/catalog/admin/#import-rubric")


def _in_view(page, selector: str) -> bool:
    """The element's top lies inside the viewport (it is where the user looks)."""
    return page.locator(selector).first.evaluate(
        "el => { const r = el.getBoundingClientRect();"
        " return r.top >= 0 && r.top < window.innerHeight; }"
    )


@pytest.mark.parametrize("javascript", [True, False])
def test_an_import_error_is_shown_in_view_with_a_banner_and_its_problems(
    browser, live_server, admin, password, tmp_path, javascript
):
    context = browser.new_context(
        base_url=live_server.url,
        viewport={"width": 1366, "height": 768},
        java_script_enabled=javascript,
    )
    page = context.new_page()
    page.goto("/accounts/login/")
    page.fill("input[name=username]", admin.username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.goto("/catalog/admin/")
    bad = tmp_path / "ratings.csv"
    bad.write_text("idea,reviewer,dimension,score\nidea-404,nobody,novelty,9\n", encoding="utf-8")
    panel = page.locator("#import-ratings")
    panel.locator("input[type=file]").set_input_files(str(bad))
    panel.get_by_role("button", name="Import ratings").click()
    page.locator("#import-ratings .catalog-banner").wait_for()
    banner = page.locator("#import-ratings .catalog-banner").inner_text()
    assert banner.startswith("The import of ratings.csv failed.") and "listed below" in banner
    assert "{#" not in page.locator("#import-ratings").inner_text()
    page.wait_for_timeout(300)  # htmx's show:top scroll
    assert _in_view(page, "#import-ratings .catalog-banner")
    assert _in_view(page, "#import-ratings .catalog-error-table")
    assert page.locator("#import-ratings [role=alert]").count() == 1
    page.screenshot(path=f"/tmp/rux-import-error-{'js' if javascript else 'nojs'}.png")
    context.close()
