"""PostgreSQL stopped and started under a real browser: the reviewer's typed scores survive on the
page, the form says they are not saved yet and retries, and they are saved once it is back.

The live server is pointed at a private throwaway cluster holding a copy of the test database
(tests/outages.py); that cluster is stopped and started, never the shared one on 5432.
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from apps.screening.models import Rating, RatingHistory
from tests.outages import served_by_private_cluster

pytestmark = [pytest.mark.browser]

RATIONALE = "Typed while the database was down."


def _fill_every_stage(page) -> None:
    page.check("#score-specificity-4")
    page.check("#score-technical_validity-3")
    expect(page.locator("#dim-innovativeness")).to_be_visible()
    page.check("#score-innovativeness-4")
    page.check("#answer-competitive_advantage-hard_to_imitate-yes")
    page.check("#answer-competitive_advantage-technology_essential-no")
    page.check("#score-need_validity-2")
    page.check("#score-market_size-3")
    page.wait_for_load_state("networkidle")
    page.fill("#rationale-innovativeness", RATIONALE)


def test_scores_typed_while_postgresql_is_down_stay_on_the_page_and_are_saved_once_it_is_back(
    page, login, reviewer, idea, pbig_rubric
):
    with served_by_private_cluster() as cluster:
        login(reviewer)
        page.goto(f"/screening/ideas/{idea.id}/")
        expect(page.locator("h1")).to_have_text(idea.title)
        _fill_every_stage(page)

        cluster.stop()
        health = page.request.get("/healthz")
        assert health.status == 503
        assert health.json()["down"] == ["database"]

        page.get_by_role("button", name="Submit rating").click()
        status = page.locator("#save-status")
        expect(status).to_be_visible()
        expect(status).to_contain_text("Not saved yet")
        expect(status).to_contain_text("cannot reach its database")
        expect(status).to_contain_text("saved automatically")
        # A second failed try, after the first wait: still here, still retrying.
        expect(status).to_contain_text("trying again in", timeout=15_000)
        time.sleep(3)
        assert page.url.endswith(f"/screening/ideas/{idea.id}/")
        expect(page.locator("#score-innovativeness-4")).to_be_checked()
        expect(
            page.locator("#answer-competitive_advantage-technology_essential-no")
        ).to_be_checked()
        expect(page.locator("#rationale-innovativeness")).to_have_value(RATIONALE)
        page.screenshot(path="/tmp/outages-not-saved-yet.png", full_page=True)
        # Any other page meanwhile: the outage page, which tries again by itself.
        other = page.context.new_page()
        answer = other.goto("/screening/")
        assert answer is not None and answer.status == 503
        expect(other.locator("h1")).to_have_text("Back in a moment")
        expect(other.locator("#unavailable")).to_contain_text("the database (PostgreSQL)")
        expect(other.locator("#unavailable")).to_contain_text("tries again by itself")
        other.screenshot(path="/tmp/outages-page.png", full_page=True)
        other.close()

        cluster.start()
        expect(page.locator(".msg-success")).to_contain_text("Saved your rating of", timeout=30_000)
        assert page.url.endswith("/screening/")

        stored = {
            r.dimension.key: (r.status, r.score, r.rationale)
            for r in Rating.objects.filter(reviewer=reviewer, idea=idea).select_related("dimension")
        }
        assert stored["specificity"] == ("scored", 4, "")
        assert stored["innovativeness"] == ("scored", 4, RATIONALE)
        assert stored["market_size"] == ("scored", 3, "")
        assert stored["competitive_advantage"][0] == "scored"
        # Saved exactly once: one history row per dimension, none from the retries.
        history = RatingHistory.objects.filter(rating__reviewer=reviewer, rating__idea=idea)
        assert history.count() == len(stored)
        time.sleep(2)
        assert history.count() == len(stored)
