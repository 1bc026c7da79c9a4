"""Shape stored panel rows for the pages (no computation beyond labels and sums)."""

from __future__ import annotations

from typing import Any

from apps.catalog.models import Domain
from apps.panels import selectors
from apps.panels.models import PanelChunk, PanelDebate, PanelRun, Persona, PersonaDocument

DEBATES_SHOWN = 50
STOP_LABELS = {
    "unanimous": "all agreed",
    "stable": "scores stopped changing",
    "max_rounds": "maximum of rounds",
}


def home_page(*, domain: Domain | None) -> dict[str, Any]:
    personas = list(selectors.personas_for(domain=domain)) if domain else []
    groups = [
        {
            "source": value,
            "label": label,
            "personas": [p for p in personas if p.source == value],
        }
        for value, label in Persona.Source.choices
    ]
    return {
        "domain": domain,
        "domains": Domain.objects.order_by("name"),
        "endpoint": selectors.llm_endpoint(),
        "groups": groups,
        "documents": PersonaDocument.objects.filter(domain=domain)[:20] if domain else [],
        "runs": selectors.runs_for(domain=domain) if domain else [],
        "comparison": source_comparison(domain) if domain else [],
    }


def source_comparison(domain: Domain) -> list[dict[str, Any]]:
    """The latest finished run of each persona source, side by side, per dimension."""
    rows = []
    for value, label in Persona.Source.choices:
        run = (
            PanelRun.objects.filter(
                domain=domain,
                persona_source=value,
                status__in=[PanelRun.Status.DONE, PanelRun.Status.STOPPED],
            )
            .order_by("-created_at", "-id")
            .first()
        )
        if run is None:
            continue
        for key, fig in (run.figures.get("dimensions") or {}).items():
            rows.append({"source": label, "run": run, "dimension": key, **fig})
    return rows


def run_page(run: PanelRun) -> dict[str, Any]:
    chunks = run.chunks.all()
    total = chunks.count()
    done = chunks.filter(status=PanelChunk.Status.DONE).count()
    members = list(run.personas.order_by("id"))
    names = {p.id: p.name for p in members}
    debates = []
    for d in (
        PanelDebate.objects.filter(run=run)
        .select_related("idea", "dimension")
        .order_by("idea_id", "dimension__position")[:DEBATES_SHOWN]
    ):
        first = d.rounds[0] if d.rounds else {}
        last = d.rounds[-1] if d.rounds else {}
        debates.append(
            {
                "debate": d,
                "stop": STOP_LABELS.get(d.stop_reason, d.stop_reason),
                "members": [
                    {"name": names.get(int(k), k), "before": v, "after": last.get(k, v)}
                    for k, v in first.items()
                ],
            }
        )
    usage = (
        selectors.run_usage(run)
        if run.is_active
        else {
            "calls": run.calls,
            "prompt_tokens": run.prompt_tokens,
            "completion_tokens": run.completion_tokens,
        }
    )
    figures = run.figures or {}
    return {
        "run": run,
        "members": members,
        "progress": {
            "done": done,
            "total": total,
            "percent": round(100 * done / total) if total else 0,
        },
        "usage": {**usage, "tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
        "dimensions": figures.get("dimensions") or {},
        "overall": figures.get("overall") or {},
        "debates": debates,
        "poll": run.is_active,
    }
