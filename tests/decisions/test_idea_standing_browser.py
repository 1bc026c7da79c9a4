"""The idea page reached from Decide shows the idea's place on the board (rank, interval,
P(top)) and the judges' predictions behind it, each linking to that judge's case."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.judges.models import JudgeConfig, JudgeFinal, JudgeRun
from apps.screening.models import Dimension
from tests.decisions.conftest import compute_decisions
from tests.disagreement.conftest import plant_ratings
from tests.factories import DomainFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def predicted(db):
    nlp = DomainFactory(key="nlp", name="NLP")
    plant_ratings(domains=[nlp], n_ideas=12, n_reviewers=4)
    rev0 = User.objects.get(username="nlp-rev0")
    rated = Idea.objects.filter(patent__domain=nlp).order_by("id").first()
    unread = Idea.objects.create(
        external_id="nlp-UNREAD", patent=rated.patent, title="Zebra translation for contracts"
    )
    run = JudgeRun.objects.create(
        purpose=JudgeRun.Purpose.PREDICTION,
        domain=nlp,
        reviewer=rev0,
        dimensions=["innovativeness"],
        scope_key="prediction|nlp-rev0|nlp|innovativeness",
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
        confidence=88,
        kept=3,
        reason="Close to the contracts ideas this reviewer scored high.",
    )
    compute_decisions()
    return unread


def test_the_idea_page_from_decide_shows_its_standing_and_links_each_judges_case(
    page, login, manager, predicted
):
    login(manager)
    page.goto("/decisions/decide/?domain=nlp")
    row = page.locator('#board-table tbody tr[data-idea="nlp-UNREAD"]')
    rank = row.locator("td").nth(0).inner_text().strip()
    interval = row.locator(".dz-interval").inner_text().strip()
    p_top = row.locator(".dz-ptop").inner_text().strip()
    row.locator(".dz-title a").click()
    page.wait_for_selector("#idea-standing")
    overall = page.locator("#standing-overall").inner_text()
    assert f"#{rank} of 13 in NLP" in overall
    assert page.locator("#standing-interval").inner_text().strip() == interval
    # Decide shows P(top N) for the domain's shortlist size; the idea page shows it too.
    assert page.locator("#standing-ptop-n").inner_text().strip() == p_top
    # A panel judge's prediction tells the board that reviewer's scale, not new evidence about
    # the idea (docs/decide.md): an idea nobody read stays at the prior.
    assert "no evidence yet: the estimate is the prior" in overall
    # Back to the board, and on to the judge's case for the prediction used.
    assert (
        page.locator("#standing-on-decide")
        .get_attribute("href")
        .startswith("/decisions/decide/?domain=nlp")
    )
    dim_row = page.locator('#standing-table tr[data-dimension="innovativeness"]')
    assert "nlp-rev0=5 @88%" in dim_row.inner_text()
    page.screenshot(path="/tmp/decisions-idea-standing.png", full_page=True)
    with page.expect_navigation() as nav:
        dim_row.locator("a.standing-case").first.click()
    assert nav.value is not None and nav.value.status == 200
    assert page.url.endswith(f"/judges/cases/{predicted.id}/#case-innovativeness-nlp-rev0")
    target = page.locator("#case-innovativeness-nlp-rev0")
    assert target.is_visible()
    assert "Close to the contracts ideas" in page.locator(".jg-case").first.inner_text()
