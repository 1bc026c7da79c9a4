"""The findings page and the idea page's findings, drawn in Chromium for a manager."""

from __future__ import annotations

import numpy as np
import pytest

from apps.demo.findings_pool import CONCERNS, TOPICS, phrase
from apps.findings.models import FindingSnapshot, scope_key
from apps.findings.services import findings_recompute
from apps.screening.models import Rating
from tests.disagreement.conftest import compute_snapshot, plant_ratings
from tests.factories import DomainFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def computed(db):
    nlp = DomainFactory(key="nlp", name="NLP")
    plant_ratings(domains=[nlp], n_ideas=12, n_reviewers=6)
    # Each idea gets a pool of points; every reviewer's rationales state some of them.
    rng = np.random.default_rng(5)
    pools: dict[int, list[str]] = {}
    for rating in Rating.objects.exclude(rationale="").order_by("id"):
        concerns = rng.permutation(CONCERNS)[:6]
        pool = pools.setdefault(
            rating.idea_id, [f"{t} / {c}" for t, c in zip(TOPICS[:6], concerns, strict=True)]
        )
        keys = [pool[int(i)] for i in rng.choice(len(pool), size=2, replace=False)]
        rating.rationale = " ".join(phrase(rng, k) for k in keys)
        rating.save(update_fields=["rationale"])
    compute_snapshot()
    row = FindingSnapshot.objects.create(scope=scope_key(threshold=0.5), threshold=0.5)
    done = findings_recompute(snapshot_id=row.id)
    assert done.status == FindingSnapshot.Status.DONE, done.error
    return done


def test_a_manager_sees_both_curves_and_an_ideas_findings(page, login, manager, computed):
    login(manager)
    page.goto("/findings/?domain=nlp")
    headline = page.locator("#findings-headline").inner_text()
    assert "surface 80 %" in headline or "no panel up to 12" in headline
    for curve in ("polyline", "polygon"):
        assert page.locator(f"#findings-chart {curve}").count() >= 1
    box = page.locator("#findings-chart").bounding_box()
    assert box and box["width"] > 300 and box["height"] > 100
    page.screenshot(path="/tmp/findings-overview.png", full_page=True)
    page.locator("#findings-ideas a").first.click()
    page.wait_for_load_state("networkidle")
    text = page.locator("#idea-findings").inner_text()
    assert "distinct finding" in text
    page.screenshot(path="/tmp/findings-idea.png", full_page=True)
