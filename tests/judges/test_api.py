"""Judges API: every endpoint for every role."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from apps.judges import services
from apps.judges.models import JudgeConfig, JudgeHistory, JudgeRun
from tests.judges.helpers import small_configs

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return APIClient()


@pytest.fixture
def queued_run(domain, two_reviewers_history, broker):
    rita, _, _ = two_reviewers_history
    run, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=small_configs(),
        reviewer=rita,
    )
    return run


def test_configs_are_read_by_managers_and_written_only_by_admins(api, manager, admin, reviewer):
    url = reverse("judges-api-configs")
    body = {"name": "mine", "kind": "personalized", "backend": "local", "shots": [0, 9], "seeds": 3}
    api.force_authenticate(reviewer)
    assert api.get(url).status_code == 403
    api.force_authenticate(manager)
    assert api.get(url).status_code == 200
    assert api.post(url, body, format="json").status_code == 403
    api.force_authenticate(admin)
    created = api.post(url, body, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["backend_label"] == "Local baseline (not an LLM)"
    config_url = reverse("judges-api-config", args=[created.json()["id"]])
    api.force_authenticate(manager)
    assert api.patch(config_url, {"seeds": 1}, format="json").status_code == 403
    assert api.delete(config_url).status_code == 403
    api.force_authenticate(admin)
    assert api.patch(config_url, {"seeds": 1}, format="json").json()["seeds"] == 1
    assert (
        JudgeHistory.objects.filter(config_id=created.json()["id"], event="config_changed").count()
        == 1
    )
    bad = api.patch(config_url, {"confidence_threshold": 101}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "confidence_threshold"
    assert api.delete(config_url).status_code == 204
    assert api.get(config_url).status_code == 404


def test_deleting_a_configuration_used_by_runs_is_refused(api, admin, queued_run):
    config = queued_run.configs.first()
    api.force_authenticate(admin)
    response = api.delete(reverse("judges-api-config", args=[config.id]))
    assert response.status_code == 400 and "deactivate" in response.json()["detail"]


def test_runs_are_listed_for_managers_and_cancelled_only_by_admins(api, manager, admin, queued_run):
    rita = queued_run.reviewer
    api.force_authenticate(rita)
    assert api.get(reverse("judges-api-runs")).status_code == 403
    assert api.get(reverse("judges-api-run", args=[queued_run.id])).status_code == 403
    api.force_authenticate(manager)
    listed = api.get(reverse("judges-api-runs")).json()
    assert [r["id"] for r in listed] == [queued_run.id] and listed[0]["status"] == "queued"
    assert api.post(reverse("judges-api-run-cancel", args=[queued_run.id])).status_code == 403
    api.force_authenticate(admin)
    response = api.post(reverse("judges-api-run-cancel", args=[queued_run.id]))
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    again = api.post(reverse("judges-api-run-cancel", args=[queued_run.id]))
    assert again.status_code == 400
    assert api.get(reverse("judges-api-run", args=[999999])).status_code == 404


def test_an_admin_starts_a_study_by_api_and_the_same_study_is_not_duplicated(
    api,
    admin,
    manager,
    domain,
    two_reviewers_history,
    broker,
    django_capture_on_commit_callbacks,
):
    small_configs()
    body = {
        "domain": "nlp",
        "dimensions": ["innovativeness"],
        "configs": ["aggregate", "personalized"],
        "shots": [0, 2],
        "seeds": 1,
        "backend": "local",
    }
    url = reverse("judges-api-studies")
    api.force_authenticate(manager)
    assert api.post(url, body, format="json").status_code == 403
    api.force_authenticate(admin)
    with django_capture_on_commit_callbacks(execute=True):
        first = api.post(url, body, format="json")
    assert first.status_code == 201, first.content
    second = api.post(url, body, format="json")
    assert second.status_code == 200 and second.json()["id"] == first.json()["id"]
    assert broker.run_ids_sent() == [first.json()["id"]]
    bad = api.post(url, {**body, "dimensions": ["novelty"]}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "dimensions"
    bad = api.post(url, {**body, "domain": "nowhere"}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["value"] == "nowhere"
    bad = api.post(url, {**body, "configs": ["oracle"]}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "configs"


def test_predictions_and_alignment_are_for_managers_and_a_reviewer_reads_only_their_own(
    api, manager, evaluated
):
    rita, otto, _ = evaluated

    api.force_authenticate(rita)
    assert api.get(reverse("judges-api-predictions")).status_code == 403
    assert api.get(reverse("judges-api-alignment")).status_code == 403
    mine = api.get(reverse("judges-api-my-alignment"))
    assert mine.status_code == 200 and "otto" not in mine.content.decode()

    api.force_authenticate(manager)
    assert api.get(reverse("judges-api-my-alignment")).status_code == 403
    page = api.get(reverse("judges-api-predictions"), {"reviewer": "rita"}).json()
    preds = page["results"]
    assert page["count"] == 2 and len(preds) == 2 and {p["kind"] for p in preds} == {"personalized"}
    assert api.get(reverse("judges-api-predictions"), {"reviewer": "nobody"}).status_code == 400
    report = api.get(reverse("judges-api-alignment"), {"domain": "nlp"}).json()
    assert {(r["kind"], r["k"]) for r in report["curve"]} == {
        ("zero_shot", 0),
        ("aggregate", 2),
        ("personalized", 2),
    }
    assert {r["kind"] for r in report["reasoning"]} <= {"zero_shot", "aggregate", "personalized"}


def test_anonymous_users_are_refused_everywhere(api, queued_run):
    for name, args in [
        ("judges-api-configs", []),
        ("judges-api-runs", []),
        ("judges-api-run", [queued_run.id]),
        ("judges-api-predictions", []),
        ("judges-api-alignment", []),
        ("judges-api-my-alignment", []),
    ]:
        assert api.get(reverse(name, args=args)).status_code in (401, 403)
    assert api.post(reverse("judges-api-studies"), {}, format="json").status_code in (401, 403)
    assert JudgeRun.objects.get(id=queued_run.id).status == "queued"
    assert JudgeConfig.objects.count() == 3
