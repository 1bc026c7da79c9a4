"""Keyboard rating and kept answers on the staged form, in a real browser."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from apps.screening.models import Assignment, Rating
from apps.screening.services.ratings import rating_submit
from tests.factories import PASSWORD
from tests.workers import wait_for

pytestmark = [pytest.mark.browser]


def _scores(reviewer, idea):
    return {
        r.dimension.key: (r.status, r.score)
        for r in Rating.objects.filter(reviewer=reviewer, idea=idea).select_related("dimension")
    }


@pytest.mark.parametrize("server_delay", [0.0, 0.3])
def test_a_reviewer_rates_a_whole_idea_with_the_keyboard_alone_in_at_most_12_keys(
    page, login, reviewer, idea, pbig_rubric, monkeypatch, server_delay
):
    # A slow server (each stage update takes 0.3 s) must not lose or reorder keys either.
    import time

    from apps.screening.views import rate

    partial = rate._stages_partial

    def slow_partial(*args, **kwargs):
        time.sleep(server_delay)
        return partial(*args, **kwargs)

    monkeypatch.setattr(rate, "_stages_partial", slow_partial)
    login(reviewer)
    page.goto(f"/screening/ideas/{idea.id}/")
    legend = page.locator("#key-legend")
    expect(legend).to_be_visible()
    expect(legend).to_contain_text("score the highlighted dimension")
    expect(page.locator("#dim-specificity")).to_have_class("scr-dim is-current")
    page.screenshot(path="/tmp/rux-keyboard-start.png", full_page=True)

    # Typed as fast as Playwright can, without waiting for any stage to open: keys that arrive
    # while the server decides what opens wait in a queue and none is lost.
    keys = ["4", "3", "2", "1", "4", "y", "y", "Enter"]
    for key in keys:
        page.keyboard.press(key)
    assert len(keys) <= 12

    # Eight round trips of up to 0.3 s each on a loaded machine: allow time, not lost keys.
    expect(page.locator(".msg-success")).to_contain_text("Saved your rating of", timeout=30_000)
    assert _scores(reviewer, idea) == {
        "specificity": ("scored", 4),
        "technical_validity": ("scored", 3),
        "need_validity": ("scored", 2),
        "market_size": ("scored", 1),
        "innovativeness": ("scored", 4),
        "competitive_advantage": ("scored", 4),
    }
    assert Assignment.objects.get(reviewer=reviewer, idea=idea).status == "completed"


def test_enter_on_a_radio_of_an_incomplete_form_neither_reloads_nor_saves(
    page, login, reviewer, idea, pbig_rubric
):
    login(reviewer)
    page.goto(f"/screening/ideas/{idea.id}/")
    page.evaluate("window.__noReload = true")
    page.keyboard.press("4")
    expect(page.locator("#dim-technical_validity")).to_be_visible()
    page.focus("#score-technical_validity-3")
    page.keyboard.press("Enter")
    expect(page.locator("#key-status")).to_contain_text("Still to rate: Technical validity")
    assert page.evaluate("window.__noReload") is True
    assert not Rating.objects.exists()
    # A number key on a dimension without that level says so instead of doing nothing.
    page.keyboard.press("9")
    expect(page.locator("#key-status")).to_contain_text("Technical validity has no level 9")
    page.screenshot(path="/tmp/rux-keyboard-hint.png", full_page=True)


def test_closing_and_reopening_a_stage_keeps_typed_answers_and_a_lowering_save_asks_first(
    page, login, reviewer, idea, pbig_rubric
):
    login(reviewer)
    page.goto(f"/screening/ideas/{idea.id}/")
    page.evaluate("window.__noReload = true")
    page.check("#score-specificity-3")
    page.check("#score-technical_validity-3")
    page.check("#score-need_validity-2")
    page.check("#score-market_size-2")
    page.fill("#rationale-market_size", "Most plants have this problem.")
    page.check("#score-specificity-2")
    expect(page.locator("#dim-market_size")).to_have_count(0)
    expect(page.locator("#kept-2")).to_contain_text("kept while this page is open")
    expect(page.locator("#stage-warnings")).to_contain_text(
        "Saving now stores Technical validity, Need validity, Market size as not rated by design"
    )
    page.screenshot(path="/tmp/rux-kept.png", full_page=True)
    page.check("#score-specificity-3")
    expect(page.locator("#score-technical_validity-3")).to_be_checked()
    expect(page.locator("#score-need_validity-2")).to_be_checked()
    expect(page.locator("#score-market_size-2")).to_be_checked()
    expect(page.locator("#rationale-market_size")).to_have_value("Most plants have this problem.")
    assert page.evaluate("window.__noReload") is True

    # Each answer posts the stage (htmx); the next one waits for its swap, which a loaded CI
    # machine saw land after the next click and undo it ("did not change its state").
    for answer in (
        "#score-innovativeness-3",
        "#answer-competitive_advantage-hard_to_imitate-yes",
        "#answer-competitive_advantage-technology_essential-no",
    ):
        page.check(answer)
        page.wait_for_function("() => !document.querySelector('#rating-form.htmx-request')")
        expect(page.locator(answer)).to_be_checked()
    page.get_by_role("button", name="Submit rating").click()
    expect(page.locator(".msg-success")).to_contain_text("Saved your rating of")
    # The save moves the page to the queue by script; a goto that starts while that page is still
    # loading can be cancelled by it (CI once saw net::ERR_ABORTED here).
    page.wait_for_url("**/screening/")
    page.wait_for_load_state("load")

    # Editing: 3 -> 1 -> 3 keeps the saved downstream scores on the form.
    page.goto(f"/screening/ideas/{idea.id}/")
    page.check("#score-specificity-1")
    expect(page.locator("#dim-need_validity")).to_have_count(0)
    page.check("#score-specificity-3")
    expect(page.locator("#score-need_validity-2")).to_be_checked()
    expect(page.locator("#answer-competitive_advantage-hard_to_imitate-yes")).to_be_checked()

    # Saving with the lower score names what closes and waits for a confirmation.
    page.check("#score-specificity-1")
    page.get_by_role("button", name="Save changes").click()
    box = page.locator("#confirm-box")
    expect(box).to_contain_text("as not rated by design")
    expect(box).to_contain_text("Your earlier scores stay in your edit history.")
    page.screenshot(path="/tmp/rux-confirm.png", full_page=True)
    assert _scores(reviewer, idea)["market_size"] == ("scored", 2)
    page.get_by_role("button", name="Save anyway").click()
    expect(page.locator(".msg-success")).to_contain_text("Saved your rating of")
    # The first save's message can still be on the page, so the message alone does not prove
    # the second save has landed: wait for the rating itself (CI once read it too early).
    wait_for(
        lambda: _scores(reviewer, idea)["market_size"] == ("gated", None),
        timeout=10,
        message="market size was not closed by the gate after 'Save anyway'",
    )
    assert _scores(reviewer, idea)["specificity"] == ("scored", 1)


def test_without_javascript_closed_answers_are_kept_and_a_lowering_save_asks_first(
    browser, live_server, reviewer, idea, pbig_rubric
):
    rating_submit(
        reviewer=reviewer,
        idea=idea,
        scores={
            "specificity": 4,
            "technical_validity": 3,
            "innovativeness": 2,
            "need_validity": 2,
            "market_size": 1,
        },
        answers={"competitive_advantage": {"hard_to_imitate": True, "technology_essential": False}},
    )
    context = browser.new_context(java_script_enabled=False, base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        page.goto("/accounts/login/")
        page.fill("input[name=username]", reviewer.username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.goto(f"/screening/ideas/{idea.id}/")
        expect(page.locator("#key-legend")).to_be_hidden()
        page.check("#score-specificity-2")
        page.get_by_role("button", name="Continue").click()
        expect(page.locator("#dim-market_size")).to_have_count(0)
        expect(page.locator("#kept-2")).to_contain_text("come back if the stage opens again")
        page.check("#score-specificity-4")
        page.get_by_role("button", name="Continue").click()
        expect(page.locator("#score-market_size-1")).to_be_checked()

        page.check("#score-specificity-2")
        page.get_by_role("button", name="Save changes").click()
        expect(page.locator("#confirm-box")).to_contain_text(
            "Saving now stores Technical validity, Need validity, Market size, Innovativeness, "
            "Competitive advantage as not rated by design"
        )
        page.screenshot(path="/tmp/rux-confirm-nojs.png", full_page=True)
        assert _scores(reviewer, idea)["specificity"] == ("scored", 4)
        page.get_by_role("button", name="Save anyway").click()
        expect(page.locator(".msg-success")).to_contain_text("Saved your rating of")
    finally:
        context.close()
    assert _scores(reviewer, idea)["specificity"] == ("scored", 2)
    assert _scores(reviewer, idea)["technical_validity"] == ("gated", None)
