"""Writes for panels: personas (services.personas) and panel runs (services.runs: estimate and
start; services.execution: execute, finish, reclaim)."""

from apps.panels.services.execution import (
    panel_run_execute,
    panel_run_fail,
    panel_runs_reclaim,
)
from apps.panels.services.llm import panel_backend
from apps.panels.services.personas import (
    persona_document_add,
    persona_document_extract,
    personas_from_reviewers,
    personas_invent,
)
from apps.panels.services.runs import (
    BudgetReached,
    RunDeferred,
    panel_run_estimate,
    panel_run_start,
)

__all__ = [
    "BudgetReached",
    "RunDeferred",
    "panel_backend",
    "panel_run_estimate",
    "panel_run_execute",
    "panel_run_fail",
    "panel_run_start",
    "panel_runs_reclaim",
    "persona_document_add",
    "persona_document_extract",
    "personas_from_reviewers",
    "personas_invent",
]
