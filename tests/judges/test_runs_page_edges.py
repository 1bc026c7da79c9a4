"""The judges pages' rough edges (issue 21.10): the runs list's filters, a study banner that
follows the study, and no "up to date" next to a queued recomputation."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from apps.judges import services
from apps.judges.models import AlignmentSnapshot, JudgeRun
from tests.judges.helpers import small_configs


def _runs(domain, who, admin):
    configs = small_configs(seeds=1)
    automatic, _ = services.judge_run_request(
        purpose="loo_evaluation",
        domain=domain,
        dimensions=["innovativeness"],
        configs=configs,
        reviewer=who,
        enqueue=False,
    )
    services.judge_run_execute(run_id=automatic.id)
    study, _ = services.judge_study_start(
        by=admin,
        domain=domain,
        dimensions=["innovativeness"],
        configs=configs,
        shots=[0],
        seeds=1,
        enqueue=False,
    )
    return automatic, study


@pytest.mark.django_db
def test_the_runs_list_filters_by_origin_and_status(client, admin, domain, two_reviewers_history):
    rita, _otto, _ideas = two_reviewers_history
    automatic, study = _runs(domain, rita, admin)
    client.force_login(admin)

    def shown(query: str) -> set[int]:
        html = client.get(f"/judges/runs/{query}").content.decode()
        return {r.id for r in (automatic, study) if f'id="run-{r.id}"' in html}

    assert shown("") == {automatic.id, study.id}
    assert shown("?origin=automatic") == {automatic.id}
    assert shown("?origin=studies") == {study.id}
    assert shown("?status=done") == {automatic.id}
    assert shown("?origin=automatic&status=queued") == set()
    html = client.get("/judges/runs/?origin=automatic&status=queued").content.decode()
    assert "No run matches these filters." in html
    refused = client.get("/judges/runs/?status=exploded")
    assert refused.status_code == 200 and "(ignored)" in refused.content.decode()
    # The table's poll keeps the filters.
    assert "origin=studies" in client.get("/judges/runs/_table/?origin=studies").content.decode()


@pytest.mark.django_db
def test_a_queued_recomputation_never_sits_next_to_up_to_date(client, manager):
    now = timezone.now()
    AlignmentSnapshot.objects.create(scope="auto", status="done", computed_at=now, result={})
    client.force_login(manager)
    assert "up to date" in client.get("/judges/").content.decode()
    AlignmentSnapshot.objects.create(scope="auto", status="queued")
    html = client.get("/judges/").content.decode()
    assert "up to date" not in html
    assert "a newer one is queued" in html


@pytest.mark.django_db
def test_the_dashboard_draws_no_empty_chart_without_ratings(client, manager, domain):
    from apps.disagreement.models import MetricSnapshot

    MetricSnapshot.objects.create(
        scope="ordinal", status="done", result={}, n_ratings=0, computed_at=timezone.now()
    )
    client.force_login(manager)
    html = client.get("/disagreement/").content.decode()
    assert 'id="chart-overview"' not in html
    assert "No chart: no ratings yet." in html


@pytest.mark.browser
def test_the_study_banner_follows_the_study_until_it_is_done(
    page, login, admin, domain, two_reviewers_history
):
    small_configs(seeds=1)
    login(admin)
    page.goto("/judges/runs/")
    form = page.locator("#start-study form")
    form.locator("select[name=domain]").select_option(label=domain.name)
    form.locator("input[name=dimensions][value=innovativeness]").check()
    for box in form.locator("input[name=configs]").all():
        box.check()
    form.locator("input[name=shots]").fill("0")
    form.locator("input[name=seeds]").fill("1")
    form.get_by_role("button", name="Start study").click()

    banner = page.locator("#study-banner")
    expect(banner).to_contain_text("is queued")
    run = JudgeRun.objects.get(purpose="study")
    services.judge_run_execute(run_id=run.id)
    expect(banner).to_contain_text(f"Study #{run.id} is done", timeout=10_000)
    expect(page.locator(".messages")).to_have_count(0)
