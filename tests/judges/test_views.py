"""Judge pages: who may open what, empty states, content, exports, the study form."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from apps.judges import services
from apps.judges.models import JudgeRun
from tests.judges.helpers import small_configs

pytestmark = pytest.mark.django_db

MANAGER_PAGES = [
    ("judges:alignment", {}),
    ("judges:runs", {}),
    ("judges:runs_table", {}),
    ("judges:predictions", {}),
    ("judges:alignment_csv", {"table": "curve"}),
]


@pytest.mark.parametrize("name,kwargs", MANAGER_PAGES)
def test_managers_and_admins_open_the_judge_pages_and_reviewers_get_403(
    client, manager, admin, name, kwargs, domain
):
    from tests.factories import ReviewerFactory

    reviewer = ReviewerFactory(username="rhea", profile=[domain])
    url = reverse(name, kwargs=kwargs)
    client.force_login(reviewer)
    assert client.get(url).status_code == 403
    for user in (manager, admin):
        client.force_login(user)
        assert client.get(url).status_code == 200, (user, url)
    client.logout()
    assert client.get(url).status_code == 302  # to the login page


def test_the_case_view_is_for_managers_and_admins_only(client, manager, evaluated):
    rita, _, ideas = evaluated
    url = reverse("judges:case", args=[ideas[0].id])
    client.force_login(rita)
    assert client.get(url).status_code == 403
    client.force_login(manager)
    page = client.get(url).content.decode()
    assert "Personalized judge" in page and "Aggregate judge" in page
    assert "Rita" in page and "reviewer: 1" in page  # Rita scored idea 0 a 1


def test_my_judge_is_for_reviewers_only(client, manager, admin, reviewer):
    url = reverse("judges:me")
    for user in (manager, admin):
        client.force_login(user)
        assert client.get(url).status_code == 403
    client.force_login(reviewer)
    assert client.get(url).status_code == 200


def test_the_dashboard_says_so_when_there_are_no_runs(client, manager):
    client.force_login(manager)
    page = client.get(reverse("judges:alignment")).content.decode()
    assert "No judge runs yet" in page
    assert "No judge predictions yet" in page


def test_a_reviewer_below_min_history_sees_how_many_ratings_are_missing(client, domain):
    from tests.factories import ReviewerFactory
    from tests.judges.helpers import make_ideas, rate

    small_configs(min_history=10)
    rita = ReviewerFactory(username="rita", first_name="Rita", profile=[domain])
    rate(rita, make_ideas(domain, 6), "innovativeness", lambda i: 2)
    client.force_login(rita)
    page = client.get(reverse("judges:me")).content.decode()
    assert "You need 4 more ratings in NLP / innovativeness before your judge is built" in page
    assert "need 10 more ratings in NLP / specificity" in page


def test_the_dashboard_shows_alignment_charts_and_tables(client, manager, evaluated):
    client.force_login(manager)
    page = client.get(reverse("judges:alignment")).content.decode()
    assert 'data-judge-chart="jg-data-all-innovativeness"' in page
    assert "chart.umd.min.js" in page
    assert 'id="coarse-table"' in page and 'id="discard-table"' in page
    assert "Reasoning structure" in page
    assert "Local baseline (not an LLM)" in page


def test_a_reviewer_sees_only_their_own_judge(client, evaluated):
    rita, otto, _ = evaluated
    client.force_login(rita)
    page = client.get(reverse("judges:me")).content.decode()
    assert 'data-judge-chart="jg-data-me-innovativeness"' in page
    assert not re.search(r"\botto\b", page, re.IGNORECASE)
    mine = client.get(reverse("judges-api-my-alignment")).json()
    assert mine["reviewer"] == "rita"
    # The numbers are Rita's alone: the same as her single-reviewer report.
    from apps.judges import selectors

    own = selectors.alignment_report(
        run_ids=list(
            JudgeRun.objects.filter(reviewer=rita, purpose="loo_evaluation").values_list(
                "id", flat=True
            )
        ),
        with_reasoning=False,
    )
    assert mine["curve"] == own["curve"]
    both = selectors.alignment_report(
        run_ids=list(
            JudgeRun.objects.filter(purpose="loo_evaluation").values_list("id", flat=True)
        ),
        with_reasoning=False,
    )
    assert mine["curve"] != both["curve"]


def test_predictions_list_unrated_ideas_with_confidence_and_export_csv(client, manager, evaluated):
    rita, _, ideas = evaluated
    client.force_login(manager)
    page = client.get(reverse("judges:predictions"), {"reviewer": "rita"}).content.decode()
    assert ideas[12].title in page and ideas[13].title in page
    assert ideas[0].title not in page  # rated by Rita: not a prediction target
    response = client.get(reverse("judges:predictions"), {"reviewer": "rita", "format": "csv"})
    assert response["Content-Type"].startswith("text/csv")
    lines = b"".join(response.streaming_content).decode().strip().splitlines()
    assert lines[0].startswith("reviewer,domain,dimension,idea")
    assert len(lines) == 3


def test_every_alignment_export_is_a_csv(client, manager, evaluated):
    client.force_login(manager)
    for table, header in [
        ("curve", "dimension,configuration,model,k,alpha,n,coverage"),
        ("coarse", "dimension,configuration,model,k,above"),
        ("discard", "domain,dimension,predictions"),
        ("reasoning", "configuration,k,reviewer_a"),
        ("verdicts", "reviewer,dimension,configuration,k,verdict"),
        ("coverage", "configuration,model,k,threshold,coverage,accuracy"),
    ]:
        response = client.get(reverse("judges:alignment_csv", args=[table]))
        assert response.status_code == 200
        assert b"".join(response.streaming_content).decode().startswith(header)
    assert client.get(reverse("judges:alignment_csv", args=["nope"])).status_code == 404


def test_an_admin_starts_a_study_from_the_runs_page_and_a_manager_cannot(
    client,
    admin,
    manager,
    domain,
    two_reviewers_history,
    django_capture_on_commit_callbacks,
    broker,
):
    configs = small_configs()
    form = {
        "domain": domain.id,
        "dimensions": ["innovativeness"],
        "configs": [c.id for c in configs],
        "shots": "0, 2",
        "seeds": 1,
        "backend": "local",
        "min_history": 2,
    }
    client.force_login(manager)
    assert "Start a study" not in client.get(reverse("judges:runs")).content.decode()
    assert client.post(reverse("judges:runs"), form).status_code == 403
    client.force_login(admin)
    assert client.post(reverse("judges:runs"), form).status_code == 302
    run = JudgeRun.objects.get(purpose="study")
    assert run.shots == [0, 2] and run.backend == "local" and run.requested_by == admin
    bad = client.post(reverse("judges:runs"), {**form, "shots": "0, two"})
    assert "k values must be whole numbers" in bad.content.decode()


def test_the_runs_partial_polls_only_while_a_run_is_active(
    client, admin, domain, two_reviewers_history
):
    rita, _, _ = two_reviewers_history
    run, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=small_configs(),
        reviewer=rita,
        enqueue=False,
    )
    client.force_login(admin)
    partial = client.get(reverse("judges:runs_table"), HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 2s"' in partial and "Cancel" in partial and "<html" not in partial
    services.judge_run_execute(run_id=run.id)
    partial = client.get(reverse("judges:runs_table")).content.decode()
    assert "hx-trigger" not in partial and "Done" in partial


def test_an_admin_cancels_a_run_from_the_page_and_a_manager_cannot(
    client, admin, manager, domain, two_reviewers_history
):
    rita, _, _ = two_reviewers_history
    run, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=small_configs(),
        reviewer=rita,
        enqueue=False,
    )
    url = reverse("judges:run_cancel", args=[run.id])
    client.force_login(manager)
    assert client.post(url).status_code == 403
    client.force_login(admin)
    assert client.get(url).status_code == 405
    assert client.post(url).status_code == 302
    run.refresh_from_db()
    assert run.status == "cancelled"


def test_the_run_detail_shows_cost_and_history(client, manager, evaluated):
    run = JudgeRun.objects.filter(purpose="loo_evaluation").first()
    client.force_login(manager)
    page = client.get(reverse("judges:run_detail", args=[run.id])).content.decode()
    assert "calls" in page and "tokens in" in page and "queued" in page and "done" in page
