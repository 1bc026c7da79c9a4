"""manage.py panel_study: run a small panel study against the real reviewers and print figures.

    manage.py panel_study --domain KEY --personas reviewers|documents|invented
        [--rounds R] [--ideas N] [--dimension K] --format json

Builds the personas of the chosen source when the domain has none (reviewers, invented;
document personas come from documents an admin uploaded), runs the panel in this process
(the same service the workers run), and prints per dimension alpha_single, alpha_before,
alpha_after, the calls and tokens, and switch_to_majority_rate (docs/panels.md)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.catalog.models import Domain
from apps.core.errors import ApplicationError
from apps.panels import selectors
from apps.panels.models import PanelRun, Persona
from apps.panels.services import (
    panel_run_execute,
    personas_from_reviewers,
    personas_invent,
)
from apps.panels.services.runs import panel_run_plan, panel_run_start

DEFAULT_MEMBERS = 3


class Command(BaseCommand):
    help = "Run a persona panel on rated ideas and compare it with the reviewers (JSON)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--domain", required=True)
        parser.add_argument("--personas", required=True, choices=Persona.Source.values)
        parser.add_argument("--rounds", type=int, default=2)
        parser.add_argument("--ideas", type=int, default=5)
        parser.add_argument("--dimension", default=None)
        parser.add_argument("--format", choices=["json"], default="json")

    def handle(self, *args: Any, **opts: Any) -> None:
        domain = Domain.objects.filter(key=opts["domain"]).first()
        if domain is None:
            raise CommandError(f"--domain: no domain with key {opts['domain']!r}")
        source = opts["personas"]
        try:
            if selectors.personas_for(domain=domain, source=source, active_only=True).count() < 2:
                if source == Persona.Source.REVIEWERS:
                    personas_from_reviewers(domain=domain, limit=DEFAULT_MEMBERS)
                elif source == Persona.Source.INVENTED:
                    personas_invent(domain=domain, count=DEFAULT_MEMBERS)
            plan = panel_run_plan(
                domain=domain,
                source=source,
                dimension_key=opts["dimension"],
                idea_count=opts["ideas"],
                max_rounds=opts["rounds"],
            )
            run = panel_run_start(plan=plan, by=None, send=False)
            panel_run_execute(run_id=run.id)
        except ApplicationError as exc:
            detail = "; ".join(str(e) for e in exc.errors)
            raise CommandError(f"{exc.message} {detail}".strip()) from exc
        run = PanelRun.objects.get(id=run.id)
        self.stdout.write(json.dumps(study_json(run), indent=2, sort_keys=False))


def study_json(run: PanelRun) -> dict[str, Any]:
    figures = run.figures or {}
    dims = {}
    for key, fig in (figures.get("dimensions") or {}).items():
        dims[key] = {
            "alpha_single": fig.get("alpha_single"),
            "alpha_before": fig.get("alpha_before"),
            "alpha_after": fig.get("alpha_after"),
            "calls": fig.get("calls", 0),
            "tokens": fig.get("tokens", 0),
            "switch_to_majority_rate": fig.get("switch_to_majority_rate"),
            **{
                k: v
                for k, v in fig.items()
                if k not in {"alpha_single", "alpha_before", "alpha_after", "calls", "tokens"}
                and k != "switch_to_majority_rate"
            },
        }
    overall = figures.get("overall") or {}
    return {
        "run": run.id,
        "status": run.status,
        "error": run.error,
        "domain": run.domain.key,
        "personas": run.persona_source,
        "members": [p.name for p in run.personas.order_by("id")],
        "model": run.model,
        "rounds": run.max_rounds,
        "ideas": run.chunks.count(),
        "calls": run.calls,
        "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens,
        "tokens": run.prompt_tokens + run.completion_tokens,
        "estimate": run.estimate,
        "switch_to_majority_rate": overall.get("switch_to_majority_rate"),
        "dimensions": dims,
    }
