import pytest
from rest_framework.test import APIClient

from apps.disagreement.models import MetricSnapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return APIClient()


def test_anonymous_callers_get_401_on_every_metrics_endpoint(api, snapshot):
    assert api.get("/api/metrics/").status_code == 401
    assert api.post("/api/metrics/recompute/").status_code == 401
    assert api.get(f"/api/metrics/recompute/{snapshot.id}/").status_code == 401


def test_reviewers_get_403_on_every_metrics_endpoint(api, reviewer, snapshot):
    api.force_authenticate(reviewer)
    assert api.get("/api/metrics/").status_code == 403
    assert api.post("/api/metrics/recompute/").status_code == 403
    assert api.get(f"/api/metrics/recompute/{snapshot.id}/").status_code == 403


def test_managers_and_admins_read_the_metrics_with_their_freshness(api, manager, admin, snapshot):
    for user in (manager, admin):
        api.force_authenticate(user)
        body = api.get("/api/metrics/").json()
        assert body["snapshot"]["id"] == snapshot.id and body["snapshot"]["stale"] is False
        metrics = body["metrics"]
        assert metrics["level"] == "ordinal" and metrics["n_ratings"] == snapshot.n_ratings
        for key in ("cells", "strictness", "strictness_spread", "pairwise", "contested", "panel"):
            assert metrics[key], key


def test_the_metrics_can_be_filtered_by_domain_dimension_and_background(api, manager, snapshot):
    api.force_authenticate(manager)
    metrics = api.get(
        "/api/metrics/?domain=nlp&dimension=innovativeness&background=business"
    ).json()["metrics"]
    assert {(c["domain"], c["dimension"], c["background"]) for c in metrics["cells"]} == {
        ("nlp", "innovativeness", "business")
    }
    assert {r["domain"] for r in metrics["pairwise"]} == {"nlp"}
    assert {r["background"] for r in metrics["strictness"]} == {"business"}


def test_it_names_a_bad_query_parameter(api, manager, snapshot):
    api.force_authenticate(manager)
    response = api.get("/api/metrics/?level=cardinal")
    assert response.status_code == 400
    assert "level" in str(response.json())


def test_it_says_when_nothing_was_computed_yet(api, manager, db):
    api.force_authenticate(manager)
    response = api.get("/api/metrics/")
    assert response.status_code == 404 and "recompute" in response.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_a_manager_starts_a_recompute_and_reads_its_status(api, manager):
    api.force_authenticate(manager)
    response = api.post("/api/metrics/recompute/", {"level": "interval"}, format="json")
    assert response.status_code == 202
    snapshot_id = response.json()["id"]
    assert MetricSnapshot.objects.get(id=snapshot_id).level == "interval"
    status = api.get(f"/api/metrics/recompute/{snapshot_id}/").json()
    assert status["status"] == "queued" and status["id"] == snapshot_id
    assert api.get("/api/metrics/recompute/999999/").status_code == 404
    from tests.workers import purge_queue

    purge_queue()


def test_category_levels_are_left_out_by_default_and_the_switch_is_its_own_scope(
    api, manager, snapshot
):
    api.force_authenticate(manager)
    metrics = api.get("/api/metrics/").json()["metrics"]
    assert metrics["categories_included"] is False
    assert metrics["categories"]["levels"] == {"need_validity": [0], "market_size": [0]}
    assert metrics["backgrounds"] == ["business", "technical"]
    assert "board" not in metrics
    response = api.get("/api/metrics/?include_categories=true")
    assert response.status_code == 404  # not computed for that scope yet
    response = api.post("/api/metrics/recompute/", {"include_categories": True}, format="json")
    assert response.status_code == 202
    queued = MetricSnapshot.objects.get(id=response.json()["id"])
    assert queued.scope == "ordinal+categories" and queued.include_categories is True
    from tests.workers import purge_queue

    purge_queue()
