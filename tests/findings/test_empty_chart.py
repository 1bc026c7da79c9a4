"""The findings page draws no empty axes: with rationales from one reviewer only, and no
reliability computed yet, neither curve has a point and the page says why (issue 21.10)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from apps.findings.models import FindingSnapshot, scope_key
from apps.findings.presenters import svg_chart
from apps.findings.services import findings_recompute
from apps.screening.services.ratings import rating_submit


def test_the_chart_has_no_data_without_either_curve():
    assert svg_chart([], {})["has_data"] is False
    curve = {"curve": [{"reviewers": 1, "share": 0.4, "q25": 0.3, "q75": 0.5}]}
    assert svg_chart([], curve)["has_data"] is True


@pytest.mark.django_db
def test_the_page_with_one_reviewers_rationales_names_why_there_is_no_chart(
    reviewer, idea, manager
):
    rating_submit(
        reviewer=reviewer,
        idea=idea,
        scores={"specificity": 1},
        rationales={"specificity": "The pricing model ignores hospital budgets."},
    )
    row = FindingSnapshot.objects.create(scope=scope_key(threshold=0.5), threshold=0.5)
    assert findings_recompute(snapshot_id=row.id).status == FindingSnapshot.Status.DONE
    client = Client()
    client.force_login(manager)
    html = client.get(
        reverse("findings:overview") + f"?domain={idea.patent.domain.key}"
    ).content.decode()
    assert "findings-headline" in html  # the summary is shown, only the chart is not
    assert '<svg id="findings-chart"' not in html
    assert 'id="findings-chart-empty"' in html
    assert "no idea has rationales from two or more reviewers" in html
