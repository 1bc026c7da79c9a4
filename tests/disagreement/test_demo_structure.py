"""The demo data plants the paper's structure: different scales, overlapping preferences."""

import pytest
from django.urls import reverse

from apps.demo.services import demo_load
from tests.disagreement.conftest import compute_snapshot

PLANTED = ["innovativeness", "competitive_advantage", "need_validity", "market_size"]


@pytest.mark.django_db
def test_the_demo_shows_low_fine_alpha_and_clearly_higher_coarse_jaccard_on_planted_dimensions(
    client, manager
):
    demo_load(seed=0, scale=1.0)
    snapshot = compute_snapshot()
    assert snapshot.status == "done", snapshot.error
    cells = {
        c["dimension"]: c
        for c in snapshot.result["cells"]
        if c["domain"] == "__all__" and c["background"] == "__all__"
    }
    client.force_login(manager)
    html = client.get(reverse("disagreement:overview")).content.decode()
    for key in PLANTED:
        alpha, jaccard = cells[key]["fine"]["alpha"], cells[key]["coarse"]["jaccard"]
        assert alpha is not None and jaccard is not None, key
        assert alpha < 0.5, (key, alpha)
        assert jaccard > alpha + 0.15, (key, alpha, jaccard)
        # The dashboard shows those very numbers.
        assert f"{alpha:.2f}" in html and f"{jaccard:.2f}" in html
