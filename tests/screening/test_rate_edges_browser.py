"""Rough edges of the rating pages (issue 21.10), in a real browser: the confirmation that
outlived the answers it spoke of, and the pages on a 375 px touch screen."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from apps.screening.services.ratings import rating_submit
from tests.factories import IdeaFactory

pytestmark = [pytest.mark.browser]

FULL = {
    "specificity": 4,
    "technical_validity": 3,
    "innovativeness": 4,
    "need_validity": 2,
    "market_size": 3,
}
ANSWERS = {"competitive_advantage": {"hard_to_imitate": True, "technology_essential": True}}


@pytest.fixture
def rated(reviewer, idea, pbig_rubric):
    """The reviewer's idea holds a complete saved rating (every stage open)."""
    rating_submit(reviewer=reviewer, idea=idea, scores=FULL, answers=ANSWERS)
    return idea


def test_the_confirmation_goes_once_every_stage_is_reopened_and_names_dimensions_in_form_order(
    page, login, reviewer, rated
):
    login(reviewer)
    page.goto(f"/screening/ideas/{rated.id}/")
    page.check("#score-specificity-2")
    expect(page.locator("#dim-technical_validity")).to_have_count(0)
    page.get_by_role("button", name="Save changes").click()

    box = page.locator("#confirm-box")
    expect(box).to_be_visible()
    text = box.inner_text()
    shown = ["Technical validity", "Need validity", "Market size", "Innovativeness"]
    positions = [text.index(name) for name in shown]
    assert positions == sorted(positions), text
    expect(page.get_by_role("button", name="Save anyway")).to_be_visible()

    # Back to the saved answers: every stage opens again, nothing would be lost.
    page.check("#score-specificity-4")
    expect(page.locator("#dim-innovativeness")).to_be_visible()
    expect(page.locator("#confirm-box")).to_have_count(0)
    expect(page.get_by_role("button", name="Save anyway")).to_have_count(0)
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator(".msg-success")).to_contain_text("Saved your rating of")


@pytest.fixture
def phone(browser, live_server) -> Iterator[object]:
    """A 375 px touch screen (no hover, coarse pointer)."""
    context = browser.new_context(
        base_url=live_server.url,
        viewport={"width": 375, "height": 740},
        is_mobile=True,
        has_touch=True,
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    refused: list[str] = []
    page.on(
        "console",
        lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None,
    )
    yield page
    context.close()
    assert refused == [], refused


def test_on_a_phone_the_rating_page_opens_at_the_idea_without_the_keyboard_legend(
    phone, reviewer, idea, pbig_rubric, password
):
    from apps.screening.models import Assignment

    for n in range(3):
        other = IdeaFactory(
            patent=idea.patent, title=f"A rather long idea title number {n} for a narrow screen"
        )
        Assignment.objects.create(reviewer=reviewer, idea=other)
    phone.goto("/accounts/login/")
    phone.fill("input[name=username]", reviewer.username)
    phone.fill("input[name=password]", password)
    phone.click("button[type=submit]")
    phone.wait_for_load_state("networkidle")

    phone.goto("/screening/")
    width = phone.evaluate("document.documentElement.clientWidth")
    buttons = phone.get_by_role("link", name="Rate", exact=True)
    expect(buttons).to_have_count(4)
    for i in range(4):
        box = buttons.nth(i).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width

    buttons.first.click()
    expect(phone.locator("h1")).to_be_visible()
    phone.wait_for_load_state("networkidle")
    assert phone.evaluate("window.scrollY") == 0
    expect(phone.locator("#key-legend")).to_be_hidden()


def test_the_assignments_page_shows_each_reviewers_background(
    page, login, admin, reviewer, other_reviewer
):
    from apps.accounts.models import ReviewerProfile

    ReviewerProfile.objects.filter(user=reviewer).update(background="technical")
    ReviewerProfile.objects.filter(user=other_reviewer).update(background="legal")
    login(admin)
    page.goto("/screening/assignments/")
    rows = page.locator("table.asg-load-table tr", has_text=reviewer.username)
    expect(rows.first.locator("td").nth(1)).to_have_text("Technical")
    rows = page.locator("table.asg-load-table tr", has_text=other_reviewer.username)
    expect(rows.first.locator("td").nth(1)).to_have_text("Legal")
