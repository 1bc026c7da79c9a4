"""The run page tells the truth about long work: it updates by itself in a real browser."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.utils import timezone

from apps.judges.models import JudgeRun

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def _shot(page, name: str) -> None:
    directory = os.environ.get("JUDGE_SCREENSHOTS_DIR")
    if directory:
        page.screenshot(path=str(Path(directory) / f"run-{name}.png"), full_page=True)


def test_the_run_page_changes_from_running_to_done_without_a_reload(page, login, manager, domain):
    run = JudgeRun.objects.create(
        purpose="study",
        domain=domain,
        dimensions=["innovativeness"],
        scope_key="browser-run",
        status="running",
        total=10,
        done=3,
    )
    login(manager)
    page.goto(f"/judges/runs/{run.id}/")
    assert page.locator("#run-status-pill").inner_text() == "Running"
    assert "1 running" in page.locator("[data-testid=judge-work]").first.inner_text()
    page.evaluate("window.__samePage = true")
    _shot(page, "running")

    # What the worker does when the run finishes (here without one: the page is under test).
    JudgeRun.objects.filter(id=run.id).update(status="done", done=10, finished_at=timezone.now())

    page.wait_for_selector("#run-status[data-status=done]", timeout=15_000)
    assert page.evaluate("window.__samePage") is True  # swapped in place, not reloaded
    assert page.locator("#run-status-pill").inner_text() == "Done"
    assert page.locator("#run-progress").inner_text().startswith("10 / 10")
    assert page.locator("#run-status[hx-trigger]").count() == 0  # polling stopped
    assert "No judge work waiting" in page.locator("[data-testid=judge-work]").first.inner_text()
    _shot(page, "done")
