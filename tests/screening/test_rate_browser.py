"""The staged screening form in a real browser, with and without JavaScript."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from apps.screening.models import Assignment, Rating
from tests.factories import PASSWORD

pytestmark = [pytest.mark.browser]


def _state(reviewer, idea):
    return {
        r.dimension.key: (r.status, r.score, r.answers, r.rationale)
        for r in Rating.objects.filter(reviewer=reviewer, idea=idea).select_related("dimension")
    }


def test_a_reviewer_rates_an_idea_as_stages_open_and_close_without_a_reload(
    page, login, reviewer, idea, pbig_rubric
):
    login(reviewer)
    page.goto("/screening/")
    expect(page.locator("h1")).to_have_text("My queue")
    expect(page.get_by_text("0 of 1 done")).to_be_visible()
    page.screenshot(path="/tmp/h2-queue.png", full_page=True)
    page.get_by_role("link", name="Rate", exact=True).click()
    expect(page.locator("h1")).to_have_text(idea.title)
    # A marker on window survives htmx swaps but not a page load.
    page.evaluate("window.__noReload = true")

    stage2 = page.locator("#dim-technical_validity")
    stage3 = page.locator("#dim-innovativeness")
    expect(stage2).to_have_count(0)
    expect(page.get_by_role("button", name="Continue")).to_be_hidden()

    page.check("#score-specificity-4")
    expect(stage2).to_be_visible()
    expect(page.locator("#dim-need_validity")).to_be_visible()
    expect(page.locator("#dim-market_size")).to_be_visible()
    expect(stage3).to_have_count(0)
    expect(page.get_by_text("Not a B2B product.")).to_have_count(2)

    page.check("#score-technical_validity-3")
    expect(stage3).to_be_visible()
    expect(page.locator("#dim-competitive_advantage")).to_be_visible()

    page.check("#score-specificity-2")
    expect(stage2).to_have_count(0)
    expect(stage3).to_have_count(0)
    expect(page.locator("#stage-2")).to_contain_text("Not rated by design")

    page.check("#score-specificity-4")
    expect(stage2).to_be_visible()
    page.check("#score-technical_validity-1")
    expect(stage3).to_have_count(0)
    page.check("#score-technical_validity-3")
    expect(stage3).to_be_visible()

    page.check("#score-innovativeness-4")
    page.check("#answer-competitive_advantage-hard_to_imitate-yes")
    page.check("#answer-competitive_advantage-technology_essential-yes")
    expect(page.locator("#derived-competitive_advantage")).to_contain_text(
        "Score from your answers: 4"
    )
    page.check("#score-need_validity-2")
    page.check("#score-market_size-2")
    page.fill("#rationale-innovativeness", "A use I had not seen before.")
    page.check("#score-market_size-3")  # another swap must keep the typed rationale
    expect(page.locator("#rationale-innovativeness")).to_have_value("A use I had not seen before.")
    assert page.evaluate("window.__noReload") is True
    page.wait_for_load_state("networkidle")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path="/tmp/h2-rate.png", full_page=True)

    page.get_by_role("button", name="Submit rating").click()
    expect(page.locator(".msg-success")).to_contain_text("Saved your rating of")
    assert page.url.endswith("/screening/")
    expect(page.get_by_text("1 of 1 done")).to_be_visible()

    state = _state(reviewer, idea)
    assert state == {
        "specificity": ("scored", 4, None, ""),
        "technical_validity": ("scored", 3, None, ""),
        "innovativeness": ("scored", 4, None, "A use I had not seen before."),
        "competitive_advantage": (
            "scored",
            4,
            {"hard_to_imitate": True, "technology_essential": True},
            "",
        ),
        "need_validity": ("scored", 2, None, ""),
        "market_size": ("scored", 3, None, ""),
    }
    assert Assignment.objects.get(reviewer=reviewer, idea=idea).status == "completed"


def test_a_reviewer_rates_through_continue_and_submit_with_javascript_off(
    browser, live_server, reviewer, idea, pbig_rubric
):
    context = browser.new_context(java_script_enabled=False, base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        page.goto("/accounts/login/")
        page.fill("input[name=username]", reviewer.username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.goto(f"/screening/ideas/{idea.id}/")
        continue_button = page.get_by_role("button", name="Continue")
        expect(continue_button).to_be_visible()
        expect(page.locator("#dim-technical_validity")).to_have_count(0)

        page.check("#score-specificity-3")
        continue_button.click()
        expect(page.locator("#dim-technical_validity")).to_be_visible()
        expect(page.locator("#dim-innovativeness")).to_have_count(0)
        expect(page.locator("#score-specificity-3")).to_be_checked()

        # Submitting before the open stage is filled is refused with a message per field.
        page.get_by_role("button", name="Submit rating").click()
        expect(page.locator("#form-errors")).to_contain_text("Technical validity: 1 problem")
        expect(page.locator("#dim-technical_validity .errorlist")).to_have_text(
            "Technical validity is required at this stage"
        )
        expect(page.locator("#dim-market_size .errorlist")).to_contain_text(
            "Market size is required"
        )
        page.screenshot(path="/tmp/h2-rate-errors.png", full_page=True)
        assert not Rating.objects.exists()

        page.check("#score-technical_validity-2")
        page.check("#score-need_validity-0")  # "not B2B" on both: consistent, no question
        page.check("#score-market_size-0")
        page.get_by_role("button", name="Continue").click()
        expect(page.locator("#dim-innovativeness")).to_be_visible()

        page.check("#score-innovativeness-1")
        page.check("#answer-competitive_advantage-hard_to_imitate-no")
        page.check("#answer-competitive_advantage-technology_essential-no")
        page.get_by_role("button", name="Continue").click()
        expect(page.locator("#form-note")).to_contain_text("Every open stage is filled in")
        page.screenshot(path="/tmp/h2-rate-nojs.png", full_page=True)
        page.get_by_role("button", name="Submit rating").click()
        expect(page.locator(".msg-success")).to_contain_text("Saved your rating of")
    finally:
        context.close()

    scores = {k: v[1] for k, v in _state(reviewer, idea).items()}
    assert scores == {
        "specificity": 3,
        "technical_validity": 2,
        "need_validity": 0,
        "market_size": 0,
        "innovativeness": 1,
        "competitive_advantage": 1,
    }


def test_a_reviewer_declines_an_idea_after_confirming_and_it_leaves_the_queue(
    page, login, reviewer, idea, pbig_rubric
):
    from apps.screening.services.ratings import rating_submit
    from tests.factories import AssignmentFactory, IdeaFactory

    domain = idea.patent.domain
    rated = IdeaFactory(patent__domain=domain, title="Predictive maintenance dashboard")
    AssignmentFactory(reviewer=reviewer, idea=rated)
    rating_submit(reviewer=reviewer, idea=rated, scores={"specificity": 2})
    AssignmentFactory(
        reviewer=reviewer, idea=IdeaFactory(patent__domain=domain, title="Acoustic leak finder")
    )

    login(reviewer)
    page.goto(f"/screening/ideas/{idea.id}/")
    page.get_by_text("I cannot confidently judge this patent").click()
    page.fill("#id_reason", "The claims are about acoustics, not my field.")
    # The browser itself refuses to send the form until the confirmation is ticked.
    page.get_by_role("button", name="Decline this idea").click()
    assert Assignment.objects.get(reviewer=reviewer, idea=idea).status == "pending"
    page.check("#id_confirm")
    page.get_by_role("button", name="Decline this idea").click()
    expect(page.locator(".msg-success")).to_contain_text("it has left your queue")
    expect(page.locator("#queue-pending")).not_to_contain_text(idea.title)
    expect(page.locator("#queue-declined")).to_contain_text("The claims are about acoustics")
    expect(page.locator("#queue-completed")).to_contain_text("Predictive maintenance dashboard")
    expect(page.get_by_text("2 of 3 done")).to_be_visible()
    page.screenshot(path="/tmp/h2-queue-mixed.png", full_page=True)
    assert Assignment.objects.get(reviewer=reviewer, idea=idea).status == "declined"


def test_a_manager_filters_the_ratings_table(page, login, manager, reviewer, idea, pbig_rubric):
    from apps.screening.services.ratings import rating_submit

    rating_submit(
        reviewer=reviewer,
        idea=idea,
        scores={"specificity": 2},
        rationales={"specificity": "Too vague"},
    )
    login(manager)
    page.goto("/screening/ratings/")
    expect(page.locator("#rating-count")).to_have_text("6 ratings")
    page.select_option("#id_status", "gated")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#rating-count")).to_have_text("5 ratings")
    expect(page.locator(".scr-ratings-table")).to_contain_text("Not rated by design")
    assert "status=gated" in page.get_by_role("link", name="Export CSV").get_attribute("href")
    page.select_option("#id_status", "")
    page.get_by_role("button", name="Filter").click()
    page.screenshot(path="/tmp/h2-ratings.png", full_page=True)
