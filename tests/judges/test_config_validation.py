"""One configuration validator, through the admin form, the API and the services: bounds of
every numeric field (no "smallint out of range") and the SSRF allowlist for base_url."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from apps.core.errors import ApplicationError
from apps.judges import services
from apps.judges.models import JudgeConfig

pytestmark = pytest.mark.django_db

VALID = {"name": "mine", "kind": "personalized", "backend": "openai", "shots": [2, 9], "seeds": 3}
INTERNAL = "http://127.0.0.1:6379/v1"


@pytest.fixture
def llm_settings(settings):
    settings.LLM_BASE_URL = "https://llm.example.com/v1"
    settings.LLM_ALLOWED_BASE_URLS = ["https://other-llm.example.org/v1"]
    return settings


@pytest.fixture
def staff_admin(db):
    """An admin who may also use the Django admin site (staff, superuser)."""
    from apps.accounts.models import User
    from tests.factories import UserFactory

    return UserFactory(username="root", role=User.Role.ADMIN, is_staff=True, is_superuser=True)


def _admin_form(client, admin, **fields):
    client.force_login(admin)
    data = {
        "name": "mine",
        "kind": "personalized",
        "backend": "openai",
        "model": "",
        "base_url": "",
        "shots": "[2, 9]",
        "seeds": 3,
        "temperature": 0,
        "confidence_threshold": 80,
        "min_history": 10,
        "concurrency": 4,
        "is_active": "on",
        "auto": "on",
        **fields,
    }
    return client.post(reverse("admin:judges_judgeconfig_add"), data)


def test_it_refuses_a_min_history_the_database_cannot_hold_naming_the_field_in_the_api(
    admin, llm_settings
):
    api = APIClient()
    api.force_authenticate(admin)
    response = api.post(
        reverse("judges-api-configs"), {**VALID, "min_history": 317944467}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "min_history"
    assert not JudgeConfig.objects.exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("min_history", 317944467),
        ("seeds", 0),
        ("concurrency", 1000),
        ("confidence_threshold", -1),
        ("temperature", 9.5),
        ("shots", [2, 51]),
    ],
)
def test_it_refuses_every_out_of_range_number_in_the_services_naming_the_field(admin, field, value):
    with pytest.raises(ApplicationError) as err:
        services.judge_config_create(by=admin, **{**VALID, "backend": "local", field: value})
    assert [e.field for e in err.value.errors] == [field]


def test_the_admin_form_shows_the_validators_error_on_the_min_history_field(
    client, staff_admin, llm_settings
):
    response = _admin_form(client, staff_admin, min_history=317944467)
    assert response.status_code == 200  # the form again, not a 500
    assert "must be between 1 and 1000" in response.content.decode()
    assert not JudgeConfig.objects.exists()


def test_the_configured_llm_endpoint_and_listed_ones_are_allowed_and_others_refused(llm_settings):
    assert services.base_url_error("") == ""
    assert services.base_url_error("https://llm.example.com/v1/") == "", "LLM_BASE_URL always"
    assert services.base_url_error("https://OTHER-llm.example.org/v1") == ""
    assert "LLM_ALLOWED_BASE_URLS" in services.base_url_error(INTERNAL)
    assert "LLM_ALLOWED_BASE_URLS" in services.base_url_error("https://llm.example.com/v2")
    assert services.base_url_error("file:///etc/passwd") == "must be an http(s) URL"


def test_the_api_refuses_a_base_url_outside_the_allowlist_naming_the_field(admin, llm_settings):
    api = APIClient()
    api.force_authenticate(admin)
    url = reverse("judges-api-configs")
    refused = api.post(url, {**VALID, "base_url": INTERNAL}, format="json")
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["field"] == "base_url"
    assert "LLM_ALLOWED_BASE_URLS" in refused.json()["errors"][0]["message"]
    created = api.post(
        url, {**VALID, "base_url": "https://other-llm.example.org/v1"}, format="json"
    )
    assert created.status_code == 201, created.content
    config_url = reverse("judges-api-config", args=[created.json()["id"]])
    patched = api.patch(config_url, {"base_url": INTERNAL}, format="json")
    assert patched.status_code == 400 and patched.json()["errors"][0]["field"] == "base_url"
    assert JudgeConfig.objects.get().base_url == "https://other-llm.example.org/v1"


def test_the_admin_form_refuses_a_base_url_outside_the_allowlist(client, staff_admin, llm_settings):
    response = _admin_form(client, staff_admin, base_url=INTERNAL)
    assert response.status_code == 200
    assert "is not an allowed LLM endpoint" in response.content.decode()
    assert not JudgeConfig.objects.exists()
    saved = _admin_form(client, staff_admin, base_url="https://other-llm.example.org/v1")
    assert saved.status_code == 302
    assert JudgeConfig.objects.get().base_url == "https://other-llm.example.org/v1"


def test_the_services_refuse_a_base_url_outside_the_allowlist(admin, llm_settings):
    with pytest.raises(ApplicationError) as err:
        services.judge_config_create(by=admin, **VALID, base_url=INTERNAL)
    assert [e.field for e in err.value.errors] == ["base_url"]


def test_a_run_refuses_an_endpoint_that_left_the_allowlist_after_the_config_was_saved(
    domain, two_reviewers_history, llm_settings
):
    rita, _, _ = two_reviewers_history
    config = JudgeConfig.objects.create(
        name="old", kind="personalized", backend="openai", base_url=INTERNAL, shots=[2], seeds=1
    )
    run, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=[config],
        reviewer=rita,
        enqueue=False,
    )
    assert services.judge_run_execute(run_id=run.id) == "failed"
    run.refresh_from_db()
    assert "not an allowed LLM endpoint" in run.error


def test_panel_evidence_is_off_by_default_and_must_be_a_boolean(admin):
    config = services.judge_config_create(by=admin, **{**VALID, "backend": "local"})
    assert config.panel_evidence is False
    with pytest.raises(ApplicationError) as err:
        services.judge_config_create(by=admin, **{**VALID, "name": "b", "panel_evidence": "yes"})
    assert [(e.field, e.value) for e in err.value.errors] == [("panel_evidence", "yes")]
    updated = services.judge_config_update(config=config, by=admin, panel_evidence=True)
    assert updated.panel_evidence is True
