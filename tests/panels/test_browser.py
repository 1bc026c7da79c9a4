"""The panel run page in a real browser: it follows a running run and shows the study when done."""

from __future__ import annotations

import pytest

from apps.panels.models import PanelRun
from apps.panels.services import panel_run_execute
from apps.panels.services.runs import panel_run_plan, panel_run_start
from tests.panels.conftest import DIMENSION, make_personas, scripted

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def test_the_run_page_moves_from_queued_to_its_verdict_without_a_manual_reload(
    page, login, manager, domain, llm, rated
):
    make_personas(domain, ["Alice", "Bob"])
    llm(scripted(lambda persona, rnd: 1 if persona == "Alice" and not rnd else 4))
    plan = panel_run_plan(
        domain=domain, source="invented", dimension_key=DIMENSION, idea_count=2, max_rounds=1
    )
    run = panel_run_start(plan=plan, by=None, send=False)
    login(manager)
    page.goto(f"/panels/runs/{run.id}/")
    assert "waiting for a worker" in page.locator("#run-status").inner_text()
    panel_run_execute(run_id=run.id)
    assert PanelRun.objects.get(id=run.id).status == "done"
    page.wait_for_selector(f"#verdict-{DIMENSION}", timeout=15_000)
    verdict = page.locator(f"#verdict-{DIMENSION}").inner_text()
    assert "Debate moved the panel" in verdict or "did not change" in verdict
    assert "fake-model" in page.content()
