"""Decide in a real browser: the CSV a manager downloads is the table they see."""

from __future__ import annotations

import csv
import io
from decimal import ROUND_HALF_UP, Decimal

import pytest

from tests.decisions.conftest import compute_decisions
from tests.disagreement.conftest import plant_ratings
from tests.factories import PASSWORD, DomainFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def two(x: str) -> str:
    """A CSV number as the page writes it (Django's floatformat:2 rounds half up, and writes a
    value that rounds to zero as 0.00, never -0.00)."""
    rounded = Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return str(abs(rounded) if rounded == 0 else rounded)


@pytest.fixture
def decided(db):
    nlp = DomainFactory(key="nlp", name="NLP")
    chem = DomainFactory(key="materials", name="Materials Chemistry")
    plant_ratings(domains=[nlp, chem], n_ideas=30, n_reviewers=5)
    return compute_decisions()


@pytest.mark.parametrize("query", ["?domain=nlp", "?domain=nlp&dimension=need_validity&sort=p_top"])
def test_the_csv_holds_the_rows_and_numbers_the_page_shows(page, login, manager, decided, query):
    login(manager)
    page.goto("/disagreement/decide/" + query)  # the old address still leads here
    assert page.url.split("?")[0].endswith("/decisions/decide/")
    table = page.locator("#board-table tbody tr[data-idea]")
    shown = []
    for i in range(table.count()):
        row = table.nth(i)
        shown.append(
            {
                "rank": row.locator("td").nth(0).inner_text().strip(),
                "idea": row.get_attribute("data-idea"),
                "estimate": row.locator(".dz-estimate").inner_text().strip(),
                "interval": row.locator(".dz-interval").inner_text().strip(),
                "p_top": row.locator(".dz-ptop").inner_text().strip(),
                "share": row.locator(".dz-share").inner_text().strip(),
                "flags": sorted(
                    f.get_attribute("data-flag") for f in row.locator(".dz-flag").all()
                ),
            }
        )
    page.screenshot(path=f"/tmp/decisions-decide-{len(query)}.png", full_page=True)
    with page.expect_download() as info:
        page.click("#decide-export")
    text = open(info.value.path(), encoding="utf-8").read()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(shown) == 30
    for seen, row in zip(shown, rows, strict=True):
        assert seen["rank"] == row["rank"] and seen["idea"] == row["idea"]
        assert seen["estimate"] == two(row["estimate"])
        assert seen["interval"] == f"{two(row['low'])} – {two(row['high'])}"
        assert seen["p_top"] == two(row["p_top_n"])
        assert seen["share"] == f"{row['people_pct']} % · {row['judge_pct']} %"
        assert seen["flags"] == sorted(row["flags"].split())
    assert {r["domain"] for r in rows} == {"nlp"}


def test_an_admin_assigns_suggested_reads_and_the_reviewer_sees_why(page, login, admin, db):
    from apps.accounts.models import ReviewerProfile, User
    from apps.decisions.services import POLICY

    nlp = DomainFactory(key="nlp", name="NLP")
    plant_ratings(domains=[nlp], n_ideas=20, n_reviewers=4)
    newcomer = User.objects.create_user(
        username="newcomer", password=PASSWORD, role=User.Role.REVIEWER
    )
    ReviewerProfile.objects.create(user=newcomer).domains.add(nlp)
    compute_decisions()
    login(admin)
    page.goto("/screening/assignments/")
    page.wait_for_selector("#routing-table")  # loaded by htmx into the assignments page
    # The newcomer's round: per_batch suggestions (a deliberate default, 10 since issue 18's
    # routing bench: one of them random at a 10 % share).
    n = min(POLICY.per_batch, 20)
    assert page.locator("#routing-table tbody tr").count() == n
    page.screenshot(path="/tmp/decisions-routing.png", full_page=True)
    boxes = page.locator("#routing-table tbody input[type=checkbox]")
    select_all = page.locator("#routing-table thead input[data-check-all]")
    # Nothing is pre-checked: a careless submit assigns nothing.
    assert [boxes.nth(i).is_checked() for i in range(n)] == [False] * n
    assert not select_all.is_checked()
    page.click("#routing-assign")
    page.wait_for_load_state("networkidle")
    assert "Choose at least one suggestion" in page.content()
    page.goto("/screening/assignments/")
    page.wait_for_selector("#routing-table")
    boxes = page.locator("#routing-table tbody input[type=checkbox]")
    select_all = page.locator("#routing-table thead input[data-check-all]")
    select_all.check()
    assert all(boxes.nth(i).is_checked() for i in range(n))
    boxes.nth(0).uncheck()  # the header follows: half-ticked
    assert not select_all.is_checked()
    assert select_all.evaluate("el => el.indeterminate")
    boxes.nth(0).check()
    assert select_all.is_checked() and not select_all.evaluate("el => el.indeterminate")
    page.click("#routing-assign")
    page.wait_for_load_state("networkidle")
    assert f"{n} suggestions assigned" in page.content()
    page.context.clear_cookies()
    login(newcomer)
    page.goto("/screening/")
    reasons = page.locator(".scr-reason").all_inner_texts()
    assert len(reasons) == n and all(r.startswith("Why you:") for r in reasons)
    page.screenshot(path="/tmp/decisions-queue.png", full_page=True)


def test_the_routing_page_leads_a_manager_back_to_decide_not_to_a_forbidden_page(
    page, login, manager, decided
):
    login(manager)
    page.goto("/decisions/routing/")
    link = page.get_by_role("link", name="Back to Decide")
    assert page.get_by_role("link", name="Back to assignments").count() == 0
    with page.expect_navigation() as nav:
        link.click()
    assert nav.value is not None and nav.value.status == 200
    assert page.url.split("?")[0].endswith("/decisions/decide/")


def test_the_people_only_toggle_shows_the_board_fitted_without_predictions(
    page, login, manager, decided
):
    from apps.decisions.selectors import snapshot_rows

    login(manager)
    page.goto("/decisions/decide/?domain=nlp")
    assert page.locator("#decide-dark").is_visible()
    page.select_option("#decide-evidence", "people")
    page.click(".dz-board-controls button[type=submit]")
    page.wait_for_url("**evidence=people**")
    assert page.locator("#decide-dark").inner_text().startswith("People's reads only.")
    people = snapshot_rows(decided, domain="nlp", dimension="__all__", evidence="people")
    first = page.locator("#board-table tbody tr").first
    idea = first.get_attribute("data-idea")
    row = next(r for r in people if r["idea"] == idea)
    assert first.locator(".dz-estimate").inner_text().strip() == f"{row['estimate']:.2f}"
    assert "none" in first.locator("td").nth(8).inner_text()  # no predictions on this board
    with page.expect_download() as info:
        page.click("#decide-export")
    rows = list(csv.DictReader(io.StringIO(open(info.value.path(), encoding="utf-8").read())))
    assert {r["evidence"] for r in rows} == {"people"}
    page.screenshot(path="/tmp/decisions-people-only.png", full_page=True)
