"""Judge configurations are checked against the running settings (issue 29): an openai
configuration without an endpoint while LLM_BASE_URL is empty is refused when it is written
(API, admin form, study), and one stored before the settings changed is skipped by the
automatic runs with the reason on the judges page, while the other judges still run."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from apps.judges import services
from apps.judges.models import JudgeConfig, JudgeFinal, JudgeRun
from apps.screening.services.ratings import rating_submit
from tests.judges.helpers import make_ideas, reviewer_with_assignments, small_configs
from tests.workers import CeleryWorker, purge_queue, wait_for

NO_ENDPOINT = {"name": "gpt", "kind": "personalized", "backend": "openai"}


@pytest.fixture
def no_llm(settings):
    settings.LLM_BASE_URL = ""
    settings.LLM_ALLOWED_BASE_URLS = []
    return settings


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.django_db
def test_the_api_refuses_an_openai_configuration_without_an_endpoint_naming_base_url(admin, no_llm):
    response = _api(admin).post("/api/judges/configs/", NO_ENDPOINT, format="json")
    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert error["field"] == "base_url" and "LLM_BASE_URL" in error["message"]
    assert not JudgeConfig.objects.filter(name="gpt").exists()


@pytest.mark.django_db
def test_the_same_configuration_is_accepted_once_llm_base_url_is_set(admin, settings):
    settings.LLM_BASE_URL = "https://llm.example.com/v1"
    response = _api(admin).post("/api/judges/configs/", NO_ENDPOINT, format="json")
    assert response.status_code == 201, response.content


@pytest.mark.django_db
def test_switching_a_local_configuration_to_openai_without_an_endpoint_is_refused(admin, no_llm):
    config = services.judge_config_create(by=admin, name="c", kind="zero_shot", backend="local")
    api = _api(admin)
    response = api.patch(f"/api/judges/configs/{config.id}/", {"backend": "openai"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "base_url"
    config.refresh_from_db()
    assert config.backend == "local"


@pytest.mark.django_db
def test_a_configuration_the_settings_left_behind_can_still_be_renamed_and_deactivated(
    admin, no_llm
):
    stale = JudgeConfig.objects.create(**NO_ENDPOINT)  # saved while LLM_BASE_URL was set
    api = _api(admin)
    response = api.patch(
        f"/api/judges/configs/{stale.id}/", {"name": "old gpt", "is_active": False}, format="json"
    )
    assert response.status_code == 200, response.content
    stale.refresh_from_db()
    assert (stale.name, stale.is_active) == ("old gpt", False)


@pytest.mark.django_db
def test_the_admin_form_refuses_it_on_the_base_url_field(client, no_llm):
    from apps.accounts.models import User
    from tests.factories import UserFactory

    root = UserFactory(username="root", role=User.Role.ADMIN, is_staff=True, is_superuser=True)
    client.force_login(root)
    data = {
        "name": "gpt",
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
    }
    response = client.post(reverse("admin:judges_judgeconfig_add"), data)
    assert response.status_code == 200
    assert "LLM_BASE_URL" in response.content.decode()
    assert not JudgeConfig.objects.filter(name="gpt").exists()


@pytest.mark.django_db
def test_a_study_with_a_configuration_that_cannot_run_is_refused(
    admin, domain, two_reviewers_history, no_llm
):
    stale = JudgeConfig.objects.create(**NO_ENDPOINT)
    response = _api(admin).post(
        "/api/judges/studies/",
        {"domain": domain.key, "dimensions": ["innovativeness"], "configs": [str(stale.id)]},
        format="json",
    )
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "configs" and "LLM_BASE_URL" in error["message"]
    assert not JudgeRun.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["²", "٣", "9" * 5000, "-1", ""])
def test_a_study_naming_a_configuration_oddly_is_a_400_naming_configs(admin, domain, value):
    response = _api(admin).post(
        "/api/judges/studies/",
        {"domain": domain.key, "dimensions": ["innovativeness"], "configs": [value]},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert {e["field"].split(".")[0] for e in response.json()["errors"]} == {"configs"}


@pytest.mark.django_db
def test_a_planned_run_leaves_out_a_configuration_that_cannot_run_and_the_others_judge(
    domain, two_reviewers_history, no_llm
):
    rita, _, _ = two_reviewers_history
    local = small_configs(seeds=1)[2]
    stale = JudgeConfig.objects.create(name="gpt", kind="personalized", backend="openai")
    run, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=[local, stale],
        reviewer=rita,
        enqueue=False,
    )
    assert services.judge_run_execute(run_id=run.id) == "done"
    kinds = set(JudgeFinal.objects.filter(run=run).values_list("kind", flat=True))
    assert kinds == {"personalized"}
    assert JudgeFinal.objects.filter(run=run).exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_automatic_runs_skip_it_on_a_real_worker_and_the_judges_page_says_why(
    transactional_db, domain, client, manager, settings
):
    settings.LLM_BASE_URL = ""
    settings.JUDGE_DEBOUNCE_SECONDS = 0
    settings.ALIGNMENT_DEBOUNCE_SECONDS = 0
    common = {"min_history": 3, "confidence_threshold": 0, "seeds": 1}
    JudgeConfig.objects.create(name="zero", kind="zero_shot", shots=[0], backend="local", **common)
    JudgeConfig.objects.create(
        name="pers", kind="personalized", shots=[1], backend="local", **common
    )
    # Stored while an endpoint was configured; LLM_BASE_URL is empty now.
    stale = JudgeConfig.objects.create(
        name="gpt (no endpoint)", kind="personalized", shots=[1], backend="openai", **common
    )
    purge_queue()
    worker = CeleryWorker(extra_env={"LLM_BASE_URL": ""}).start()
    try:
        ideas = make_ideas(domain, 6)
        rita = reviewer_with_assignments(domain, "rita", ideas)
        for i, idea in enumerate(ideas[:4]):
            rating_submit(reviewer=rita, idea=idea, scores={"specificity": 1 + i % 2})
        wait_for(
            lambda: JudgeRun.objects.filter(reviewer=rita, status="done").count() == 2,
            timeout=90,
            message=worker.log()[-3000:],
        )
    finally:
        worker.stop()
        purge_queue()
    runs = JudgeRun.objects.filter(reviewer=rita)
    assert not runs.filter(status="failed").exists()
    assert not runs.filter(configs=stale).exists()
    assert JudgeFinal.objects.filter(run__in=runs, kind="personalized").exists()
    assert JudgeFinal.objects.filter(run__in=runs, kind="zero_shot").exists()

    client.force_login(manager)
    page = client.get(reverse("judges:runs")).content.decode()
    assert 'id="skipped-configs"' in page
    assert "gpt (no endpoint)" in page and "LLM_BASE_URL" in page
