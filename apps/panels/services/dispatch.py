"""The only module of the panels that sends Celery messages, by task name (no import of
apps.panels.tasks, which imports the services). Callers send after commit."""

from __future__ import annotations

from celery import current_app

RUN_EXECUTE = "panels.panel_run_execute"
DOCUMENT_EXTRACT = "panels.persona_document_extract"
PERSONAS_BUILD = "panels.personas_build"


def send_run(run_id: int) -> None:
    current_app.send_task(RUN_EXECUTE, args=(run_id,))


def send_document(document_id: int) -> None:
    current_app.send_task(DOCUMENT_EXTRACT, args=(document_id,))


def send_personas_build(domain_id: int, source: str, count: int) -> None:
    current_app.send_task(PERSONAS_BUILD, args=(domain_id, source, count))
