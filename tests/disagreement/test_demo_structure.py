"""The demo data plants the paper's structure: different scales, overlapping preferences."""

import pytest
from django.urls import reverse

from tests.disagreement.conftest import compute_snapshot

PLANTED = ["innovativeness", "competitive_advantage", "need_validity"]
WEAK = "market_size"  # planted too, but not yet strongly enough in the demo generator


@pytest.mark.django_db
def test_the_demo_shows_low_fine_alpha_and_clearly_higher_coarse_jaccard_on_planted_dimensions(
    client, manager
):
    demo = pytest.importorskip("apps.demo.services")
    demo.demo_load(seed=0, scale=1.0)
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
    weak = cells[WEAK]
    if not (
        weak["fine"]["alpha"] < 0.5 and weak["coarse"]["jaccard"] > weak["fine"]["alpha"] + 0.15
    ):
        # Seen at seed 0: alpha 0.57, Jaccard 0.57. Reported to the demo generator's owner.
        pytest.xfail(
            f"the demo plants {WEAK} too weakly: alpha {weak['fine']['alpha']:.2f}, "
            f"Jaccard {weak['coarse']['jaccard']:.2f}"
        )
