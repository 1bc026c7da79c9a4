"""Panel pages: what a manager and an admin see (the permissions matrix covers every role)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from apps.panels.models import PanelRun
from apps.panels.services import panel_run_execute
from apps.panels.services.runs import panel_run_plan, panel_run_start
from tests.panels.conftest import DIMENSION, make_personas, scripted

pytestmark = pytest.mark.django_db


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_without_an_endpoint_the_panels_page_says_so_and_points_to_the_demo(
    domain, manager, settings
):
    settings.LLM_BASE_URL = ""
    html = _client(manager).get(reverse("panels:home")).content.decode()
    assert "No LLM endpoint is configured" in html and "bin/demo --llm" in html


def test_an_admin_sees_the_estimate_before_the_run_starts_and_managers_see_its_study(
    domain, admin, manager, llm, rated, django_capture_on_commit_callbacks
):
    make_personas(domain, ["Alice", "Bob"])
    llm(scripted(lambda persona, rnd: 1 if persona == "Alice" and not rnd else 4))
    client = _client(admin)
    home = client.get(reverse("panels:home"), {"domain": "nlp"}).content.decode()
    assert "fake-model" in home
    body = {
        "domain": "nlp",
        "personas": "invented",
        "dimension": DIMENSION,
        "ideas": 3,
        "rounds": 2,
    }
    confirm = client.post(reverse("panels:run_start"), body)
    assert confirm.status_code == 200
    assert "Cost, at most" in confirm.content.decode()
    assert not PanelRun.objects.exists()  # nothing starts before the admin confirms
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        started = client.post(reverse("panels:run_start"), {**body, "confirm": "True"})
    run = PanelRun.objects.get()
    assert started.status_code == 302 and started["Location"] == reverse(
        "panels:run_detail", args=[run.id]
    )
    assert len(callbacks) == 1  # the message to the workers, sent after commit
    assert run.estimate["calls"] == 3 * (1 + 2 + 2 * 2 + 1)
    panel_run_execute(run_id=run.id)

    page = _client(manager).get(reverse("panels:run_detail", args=[run.id])).content.decode()
    assert (
        "Debate moved the panel toward the reviewers" in page
        or "Debate moved the panel away" in page
    )
    assert "fake-model" in page and "switch to majority" in page.lower()

    idea_id = run.chunks.first().idea_id
    idea_page = _client(manager).get(reverse("disagreement:idea", args=[idea_id])).content.decode()
    assert "Panel of LLM judges" in idea_page and "not reviewers" in idea_page


def test_a_bad_run_form_names_the_field(domain, admin, llm, rated):
    make_personas(domain, ["Alice", "Bob"])
    llm()
    client = _client(admin)
    response = client.post(
        reverse("panels:run_start"),
        {"domain": "nlp", "personas": "invented", "dimension": "colour", "ideas": 3, "rounds": 2},
        follow=True,
    )
    assert (
        "dimension: no such dimension in &#x27;nlp&#x27; (got &#x27;colour&#x27;)"
        in response.content.decode()
    )


def test_the_panels_page_compares_the_persona_sources_side_by_side(domain, manager, llm, rated):
    llm(scripted(lambda persona, rnd: 1 if persona.startswith("Inv") and not rnd else 3))
    make_personas(domain, ["Inv one", "Inv two"])
    make_personas(domain, ["Doc one", "Doc two"], source="documents")
    for source in ("invented", "documents"):
        plan = panel_run_plan(domain=domain, source=source, dimension_key=DIMENSION, idea_count=2)
        panel_run_execute(run_id=panel_run_start(plan=plan, by=None, send=False).id)
    html = _client(manager).get(reverse("panels:home"), {"domain": "nlp"}).content.decode()
    table = html.split("Which personas agree best with the reviewers")[1].split("</table>")[0]
    assert "From documents" in table and "Invented from the rubric (control)" in table
    assert "From a reviewer" not in table  # no run of that source: no row
