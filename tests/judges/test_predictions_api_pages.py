"""GET /api/judges/predictions/ is paginated like every list (issue 29: it ignored limit and
offset and stopped silently at 5,000 of about 15,000 rows)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.judges.models import JudgeFinal
from tests.factories import ReviewerFactory
from tests.judges.helpers import stored_predictions

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(manager) -> APIClient:
    client = APIClient()
    client.force_authenticate(manager)
    return client


def test_it_pages_with_limit_and_offset_and_counts_every_prediction(api, domain):
    rita = ReviewerFactory(username="rita", profile=[domain])
    stored_predictions(domain, rita, ideas=460)  # more than the old silent cap of 5,000
    total = JudgeFinal.objects.count()
    assert total > 5000
    first = api.get("/api/judges/predictions/", {"limit": 1000}).json()
    assert first["count"] == total
    assert len(first["results"]) == 1000 and first["previous"] is None
    assert "offset=1000" in first["next"]
    last = api.get("/api/judges/predictions/", {"limit": 1000, "offset": total - 10}).json()
    assert len(last["results"]) == 10 and last["next"] is None

    seen = []
    offset = 0
    while True:
        page = api.get("/api/judges/predictions/", {"limit": 1000, "offset": offset}).json()
        seen += [(r["idea"], r["dimension"], r["k"]) for r in page["results"]]
        if page["next"] is None:
            break
        offset += 1000
    assert len(seen) == len(set(seen)) == total


def test_the_default_page_is_100_and_filters_still_apply(api, domain):
    rita = ReviewerFactory(username="rita", profile=[domain])
    otto = ReviewerFactory(username="otto", profile=[domain])
    stored_predictions(domain, rita, ideas=30)
    stored_predictions(domain, otto, ideas=5)
    page = api.get("/api/judges/predictions/").json()
    assert len(page["results"]) == 100
    otto_page = api.get("/api/judges/predictions/", {"reviewer": "otto"}).json()
    assert otto_page["count"] == JudgeFinal.objects.filter(reviewer=otto).count()
    assert {r["reviewer"] for r in otto_page["results"]} == {"otto"}


@pytest.mark.parametrize(
    "params", [{"limit": "x"}, {"offset": "-1"}, {"offset": str(2**63)}, {"limit": "²"}]
)
def test_bad_paging_values_are_a_400_or_the_default(api, domain, params):
    response = api.get("/api/judges/predictions/", params)
    assert response.status_code in (200, 400)
    if response.status_code == 400:
        assert response.json()["errors"][0]["field"] in ("limit", "offset")


def test_a_page_reads_a_bounded_number_of_queries(api, domain, django_assert_max_num_queries):
    rita = ReviewerFactory(username="rita", profile=[domain])
    stored_predictions(domain, rita, ideas=50)
    with django_assert_max_num_queries(12):
        response = api.get("/api/judges/predictions/", {"limit": 500})
    assert len(response.json()["results"]) == 500
