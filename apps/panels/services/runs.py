"""Panel runs: estimate, plan and start (services.execution executes them in leased chunks and
finishes them with the study figures).

Invariants
- A run's chunks (one per idea) are created with the run; a worker works on a chunk only while
  it holds its lease (status RUNNING, its token, a heartbeat fresher than JUDGE_LEASE_SECONDS),
  taken by a conditional UPDATE and renewed between turns. A dead worker's chunk is taken over
  by the next worker that asks (the same lease as judge runs, apps.judges.services.execution).
- Every model call is stored as a PanelTurn under (run, idea, dimension, kind, member, round)
  before the debate moves on. A retried chunk replays the stored turns (no call, no new row)
  and calls the model only for the turns it lacks, so a retry ends with the same turns and the
  same debate, never duplicates.
- Calls and tokens are recomputed from the stored turns, never incremented.
- The budget cap is checked before every call against the tokens the run's stored turns used;
  once reached the run stops (status STOPPED) and its finished debates are still analysed.
- The run is finished by whichever worker finds every chunk done; the status change is a
  conditional UPDATE, so two finishers do not both write the figures.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.core.errors import ApplicationError, FieldError
from apps.judges.engine.prompting import idea_text
from apps.judges.selectors import dimensions_for_domain
from apps.panels import selectors
from apps.panels.engine import debate as engine
from apps.panels.models import PanelChunk, PanelRun, Persona
from apps.panels.services import dispatch
from apps.panels.services.llm import TURN_MAX_TOKENS, panel_backend
from apps.screening.models import Dimension

logger = logging.getLogger(__name__)

MAX_IDEAS = 200
MAX_ROUNDS = 5
MAX_MEMBERS = 8
MIN_MEMBERS = 2
# Rough prompt size of a turn beyond the idea's text (system, rubric levels, debate lines).
PROMPT_OVERHEAD_CHARS = 900
DEBATE_LINE_CHARS = 200
CHARS_PER_TOKEN = 4
IDEA_PROMPT_CHARS = 1500
REASKS = 1


class RunDeferred(Exception):
    """The endpoint is failing for now; the task retries later and resumes the run."""


class BudgetReached(Exception):
    pass


def item_text(idea: Idea) -> str:
    """The idea as a debate prompt shows it (cut at IDEA_PROMPT_CHARS)."""
    return idea_text(idea.title, idea.description, idea.implementation, idea.differentiation)[
        :IDEA_PROMPT_CHARS
    ]


# --------------------------------------------------------------------------- estimate, start
def panel_run_estimate(
    *, ideas: list[Idea], members: int, dimensions: int, max_rounds: int
) -> dict[str, Any]:
    """The most calls and tokens the run can use (every debate going to max_rounds), and the
    price at LLM_PRICE_*; shown before starting, and the default budget cap."""
    per_debate = engine.planned_calls(members=members, max_rounds=max_rounds)
    calls = per_debate * dimensions * len(ideas)
    idea_chars = sum(min(len(item_text(i)), IDEA_PROMPT_CHARS) for i in ideas)
    prompt_chars = dimensions * (
        per_debate * (idea_chars + len(ideas) * PROMPT_OVERHEAD_CHARS)
        + len(ideas) * members * max_rounds * members * DEBATE_LINE_CHARS
    )
    prompt_tokens = prompt_chars // CHARS_PER_TOKEN
    completion_tokens = calls * TURN_MAX_TOKENS
    price = (
        prompt_tokens * settings.LLM_PRICE_IN_PER_MTOK
        + completion_tokens * settings.LLM_PRICE_OUT_PER_MTOK
    ) / 1_000_000
    return {
        "calls": calls,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "tokens": prompt_tokens + completion_tokens,
        "price_usd": round(price, 4),
        "per_debate_calls": per_debate,
        "single_judge_calls": dimensions * len(ideas),
    }


@dataclass(frozen=True)
class RunPlan:
    domain: Domain
    source: str
    personas: list[Persona]
    dimensions: list[Dimension]
    ideas: list[Idea]
    max_rounds: int
    estimate: dict[str, Any]


def panel_run_plan(
    *,
    domain: Domain,
    source: str,
    dimension_key: str | None = None,
    idea_count: int = 5,
    max_rounds: int = 2,
    idea_ids: list[int] | None = None,
) -> RunPlan:
    """Validate a run's inputs and compute its estimate (no writes)."""
    errors: list[FieldError] = []
    if source not in Persona.Source.values:
        errors.append(
            FieldError("personas", f"one of {', '.join(Persona.Source.values)}", value=source)
        )
    if not 1 <= max_rounds <= MAX_ROUNDS:
        errors.append(FieldError("rounds", f"between 1 and {MAX_ROUNDS}", value=str(max_rounds)))
    if not 1 <= idea_count <= MAX_IDEAS:
        errors.append(FieldError("ideas", f"between 1 and {MAX_IDEAS}", value=str(idea_count)))
    dims = dimensions_for_domain(domain, [dimension_key] if dimension_key else None)
    if dimension_key and not dims:
        errors.append(
            FieldError("dimension", f"no such dimension in {domain.key!r}", value=dimension_key)
        )
    elif not dims:
        errors.append(FieldError("dimension", f"domain {domain.key!r} has no rubric dimensions"))
    if errors:
        raise ApplicationError("The panel run cannot start.", errors=errors)
    personas = list(
        selectors.personas_for(domain=domain, source=source, active_only=True)[:MAX_MEMBERS]
    )
    if len(personas) < MIN_MEMBERS:
        raise ApplicationError(
            f"A panel needs at least {MIN_MEMBERS} active personas from {source}; "
            f"{domain.key!r} has {len(personas)}. Build personas first.",
            errors=[FieldError("personas", "too few personas", value=source)],
        )
    keys = [d.key for d in dims]
    if idea_ids:
        ideas = list(Idea.objects.filter(id__in=idea_ids, patent__domain=domain).order_by("id"))
    else:
        ideas = selectors.study_ideas(domain=domain, dimension_keys=keys, limit=idea_count)
    if not ideas:
        raise ApplicationError(
            f"No idea in {domain.key!r} has ratings on {', '.join(keys)} to compare with.",
            errors=[FieldError("ideas", "none rated")],
        )
    estimate = panel_run_estimate(
        ideas=ideas, members=len(personas), dimensions=len(dims), max_rounds=max_rounds
    )
    return RunPlan(domain, source, personas, dims, ideas, max_rounds, estimate)


def panel_run_start(
    *, plan: RunPlan, by: User | None, budget_tokens: int | None = None, send: bool = True
) -> PanelRun:
    """Create the run and its chunks and, after commit, send it to the workers.

    ``budget_tokens`` defaults to the estimate (its upper bound); ``send=False`` leaves the
    run for the caller to execute in-process (the panel_study command)."""
    backend = panel_backend()
    budget = int(budget_tokens if budget_tokens is not None else plan.estimate["tokens"])
    if budget <= 0:
        raise ApplicationError(
            "The budget cap must be positive.", errors=[FieldError("budget_tokens", "must be > 0")]
        )
    with transaction.atomic():
        run = PanelRun.objects.create(
            domain=plan.domain,
            persona_source=plan.source,
            dimension_keys=[d.key for d in plan.dimensions],
            max_rounds=plan.max_rounds,
            budget_tokens=budget,
            estimate=plan.estimate,
            model=backend.model,
            requested_by=by,
        )
        run.personas.set(plan.personas)
        PanelChunk.objects.bulk_create(
            PanelChunk(run=run, index=i, idea=idea) for i, idea in enumerate(plan.ideas)
        )
        if send:
            transaction.on_commit(lambda: dispatch.send_run(run.id))
    return run
