"""Thin Celery tasks: ids in, one service call. Sent by name from services.dispatch."""

from __future__ import annotations

import logging

from celery import Task, shared_task

from apps.catalog.models import Domain
from apps.core.errors import ApplicationError
from apps.judges.engine.judgment import TransientBackendError
from apps.panels.models import Persona
from apps.panels.services import (
    RunDeferred,
    panel_run_execute,
    panel_run_fail,
    panel_runs_reclaim,
    persona_document_extract,
    personas_from_reviewers,
    personas_invent,
)

logger = logging.getLogger(__name__)


@shared_task(name="panels.panel_run_execute", bind=True, max_retries=20, default_retry_delay=30)
def panel_run_execute_task(self: Task, run_id: int) -> str:
    """Execute or resume a panel run; a redelivery replays stored turns (see services.runs)."""
    try:
        return panel_run_execute(run_id=run_id)
    except RunDeferred as exc:
        if self.request.retries >= self.max_retries:
            panel_run_fail(run_id=run_id, error=f"The LLM endpoint kept failing; gave up: {exc}")
            return "failed"
        raise self.retry(exc=exc) from exc


@shared_task(
    name="panels.persona_document_extract", bind=True, max_retries=5, default_retry_delay=30
)
def persona_document_extract_task(self: Task, document_id: int) -> str:
    try:
        return str(persona_document_extract(document_id=document_id).status)
    except TransientBackendError as exc:
        raise self.retry(exc=exc) from exc


@shared_task(name="panels.personas_build", bind=True, max_retries=5, default_retry_delay=30)
def personas_build_task(self: Task, domain_id: int, source: str, count: int) -> int:
    domain = Domain.objects.get(id=domain_id)
    try:
        if source == Persona.Source.REVIEWERS:
            return len(personas_from_reviewers(domain=domain, limit=count))
        return len(personas_invent(domain=domain, count=count))
    except TransientBackendError as exc:
        raise self.retry(exc=exc) from exc
    except ApplicationError as exc:  # nothing to build from (no rubric, no reviewer): say why
        logger.warning("personas for domain %s not built: %s", domain_id, exc.message)
        return 0


@shared_task(name="panels.panel_runs_reclaim")
def panel_runs_reclaim_task() -> dict:
    """Resend runs a dead worker or a lost message left behind (see the service)."""
    return panel_runs_reclaim()
