"""The only module of the panels that sends Celery messages, by task name (no import of
apps.panels.tasks, which imports the services). Callers send after commit."""

from __future__ import annotations

import logging

from celery import current_app

log = logging.getLogger(__name__)

RUN_EXECUTE = "panels.panel_run_execute"
DOCUMENT_EXTRACT = "panels.persona_document_extract"
PERSONAS_BUILD = "panels.personas_build"


RUNS_RECLAIM = "panels.panel_runs_reclaim"


def send_run(run_id: int) -> bool:
    """Send a run to the workers; False (logged) when the broker is unreachable: the run stays
    queued and the reclaim job (services.execution.panel_runs_reclaim) sends it again."""
    try:
        current_app.send_task(RUN_EXECUTE, args=(run_id,))
    except Exception:  # kombu raises several types for an unreachable broker
        log.exception("could not enqueue panel run %s", run_id)
        return False
    return True


def send_document(document_id: int) -> None:
    current_app.send_task(DOCUMENT_EXTRACT, args=(document_id,))


def send_personas_build(domain_id: int, source: str, count: int) -> None:
    current_app.send_task(PERSONAS_BUILD, args=(domain_id, source, count))
