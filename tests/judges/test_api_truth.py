"""The judges API tells the truth: its schema matches its answers, bad filters get a 400."""

from __future__ import annotations

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from apps.judges import services
from tests.judges.helpers import compute_alignment, small_configs


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def _schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def test_a_study_run_has_no_reviewer_and_the_schema_says_it_may_be_null(
    api, manager, domain, two_reviewers_history
):
    services.judge_study_start(
        by=None,
        domain=domain,
        dimensions=["innovativeness"],
        configs=small_configs(),
        shots=[2],
        seeds=1,
        enqueue=False,
    )
    api.force_authenticate(manager)
    (run,) = api.get("/api/judges/runs/").json()
    assert run["reviewer"] is None
    components = _schema()["components"]["schemas"]
    assert components["Run"]["properties"]["reviewer"]["nullable"] is True
    assert components["RunDetail"]["properties"]["alignment"]["nullable"] is True


@pytest.mark.parametrize(
    ("param", "value"),
    [("reviewer", "a\x00b"), ("domain", "nl\x00p"), ("dimension", "x\x00"), ("domain", "nope")],
)
def test_prediction_filters_refuse_bad_values_with_a_400_naming_the_parameter(
    api, manager, param, value
):
    api.force_authenticate(manager)
    response = api.get("/api/judges/predictions/", {param: value})
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {param}


def test_run_filters_refuse_an_unknown_status_with_a_400(api, manager):
    api.force_authenticate(manager)
    response = api.get("/api/judges/runs/", {"status": "sleeping\x00"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "status"


def test_the_alignment_api_returns_the_stored_snapshot_and_its_freshness(api, manager, evaluated):
    compute_alignment()
    api.force_authenticate(manager)
    body = api.get("/api/judges/alignment/").json()
    assert body["snapshot"]["scope"] == "auto" and body["snapshot"]["stale"] is False
    assert body["curve"] and "coverage" in body["curve"][0]
    assert body["models"]["personalized"][0]["label"] == "Local baseline (not an LLM)"
    assert api.get("/api/judges/alignment/", {"source": "run-\x00"}).status_code == 400
