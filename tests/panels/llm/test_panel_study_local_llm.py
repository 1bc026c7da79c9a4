"""One small panel study end to end: a real Celery worker, the real local model (Gemma 3 270M).

It proves the plumbing (turns stored, figures computed, the model named), not the method."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from apps.panels.models import PanelDebate, PanelRun, PanelTurn
from apps.panels.services.runs import panel_run_plan, panel_run_start
from tests.panels.conftest import DIMENSION, make_personas
from tests.workers import CeleryWorker, purge_queue, wait_for

pytestmark = [
    pytest.mark.llm,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def test_a_small_panel_study_runs_on_a_worker_with_the_local_model(
    llm_server, domain, rated, manager, settings
):
    settings.LLM_BASE_URL = llm_server.base_url
    settings.LLM_MODEL = llm_server.model
    make_personas(domain, ["Hospital buyer", "Ward nurse"])
    # 2 ideas x (single + 2 alone + 2 in one round + synthesis) = at most 12 calls.
    plan = panel_run_plan(
        domain=domain, source="invented", dimension_key=DIMENSION, idea_count=2, max_rounds=1
    )
    purge_queue()
    worker = CeleryWorker(
        extra_env={
            "LLM_BASE_URL": llm_server.base_url,
            "LLM_MODEL": llm_server.model,
            "LLM_TIMEOUT_SECONDS": "120",
        }
    )
    worker.start()
    try:
        run = panel_run_start(plan=plan, by=None)
        wait_for(
            lambda: PanelRun.objects.get(id=run.id).status not in ("queued", "running"),
            timeout=420,
            interval=1.0,
            message=worker.log()[-3000:],
        )
    finally:
        worker.stop()
    run.refresh_from_db()
    assert run.status == "done", run.error
    assert PanelDebate.objects.filter(run=run).count() == 2
    turns = PanelTurn.objects.filter(run=run)
    raws = [t.raw for t in turns]
    assert run.calls >= turns.count() >= 2 * 4, raws
    assert all(t.model == llm_server.model and len(t.prompt_fingerprint) == 64 for t in turns)
    figures = run.figures["dimensions"][DIMENSION]
    assert {"alpha_single", "alpha_before", "alpha_after", "switch_to_majority_rate"} <= set(
        figures
    )
    client = Client()
    client.force_login(manager)
    page = client.get(reverse("panels:run_detail", args=[run.id])).content.decode()
    assert llm_server.model in page
