"""Reads for panels: personas, reviewer facts, the study frames, and the scores other pages show.

``panel_scores_for_ideas`` is the documented entry point for other apps (Decide, the idea page).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd
from django.conf import settings
from django.db.models import Avg, Count, Sum

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.judges.selectors import dimensions_for_domain
from apps.panels.engine.personas import ReviewerFacts, RubricLine
from apps.panels.models import PanelDebate, PanelRun, PanelTurn, Persona
from apps.screening.models import Dimension, Rating

RATIONALES_PER_PERSONA = 4


def llm_endpoint() -> dict[str, str] | None:
    """The configured LLM endpoint (base URL and model), or None when there is none."""
    if not settings.LLM_BASE_URL:
        return None
    return {"base_url": settings.LLM_BASE_URL, "model": settings.LLM_MODEL}


def rubric_lines(dimensions: Iterable[Dimension]) -> list[RubricLine]:
    return [
        RubricLine(
            key=d.key,
            name=d.name,
            description=d.description,
            scale_min=d.scale_min,
            scale_max=d.scale_max,
        )
        for d in dimensions
    ]


def personas_for(*, domain: Domain, source: str | None = None, active_only: bool = False):
    qs = Persona.objects.filter(domain=domain).select_related("reviewer")
    if source:
        qs = qs.filter(source=source)
    if active_only:
        qs = qs.filter(active=True)
    return qs.order_by("source", "name")


def reviewers_with_history(*, domain: Domain, minimum: int = 1) -> list[User]:
    """Reviewers with at least ``minimum`` scored ratings in the domain, most ratings first."""
    rows = (
        Rating.objects.filter(status=Rating.Status.SCORED, idea__patent__domain=domain)
        .values("reviewer_id")
        .annotate(n=Count("id"))
        .filter(n__gte=minimum)
        .order_by("-n", "reviewer_id")
    )
    ids = [r["reviewer_id"] for r in rows]
    users = User.objects.in_bulk(ids)
    return [users[i] for i in ids if i in users]


def reviewer_facts(*, reviewer: User, domain: Domain) -> ReviewerFacts:
    """How this reviewer scores: their mean per dimension against the others' on the same
    ideas, their background, and a few of their rationales."""
    own = Rating.objects.filter(
        reviewer=reviewer, status=Rating.Status.SCORED, idea__patent__domain=domain
    )
    severity: dict[str, tuple[float, float]] = {}
    for row in own.values("dimension_id", "dimension__key").annotate(mean=Avg("score")):
        idea_ids = own.filter(dimension_id=row["dimension_id"]).values("idea_id")
        others = (
            Rating.objects.filter(
                status=Rating.Status.SCORED, dimension_id=row["dimension_id"], idea_id__in=idea_ids
            )
            .exclude(reviewer=reviewer)
            .aggregate(mean=Avg("score"))["mean"]
        )
        if others is not None:
            severity[row["dimension__key"]] = (float(row["mean"]), float(others))
    rationales = sorted(
        (r for r in own.exclude(rationale="").values_list("rationale", flat=True)[:50]),
        key=len,
    )[:RATIONALES_PER_PERSONA]
    profile = getattr(reviewer, "reviewer_profile", None)
    background = profile.background if profile else ""
    return ReviewerFacts(
        label=f"Reviewer {reviewer.username}" + (f" ({background})" if background else ""),
        background=background,
        years_experience=profile.years_experience if profile else None,
        ratings=own.count(),
        severity=severity,
        rationales=list(rationales),
    )


def study_ideas(*, domain: Domain, dimension_keys: list[str], limit: int) -> list[Idea]:
    """Ideas people rated on these dimensions, most-rated first (a study needs people's scores)."""
    ids = (
        Rating.objects.filter(
            status=Rating.Status.SCORED,
            idea__patent__domain=domain,
            dimension__key__in=dimension_keys,
        )
        .values("idea_id")
        .annotate(n=Count("reviewer_id", distinct=True))
        .order_by("-n", "idea_id")
        .values_list("idea_id", flat=True)[:limit]
    )
    ideas = Idea.objects.in_bulk(list(ids))
    return [ideas[i] for i in ids if i in ideas]


def run_dimensions(run: PanelRun) -> list[Dimension]:
    return dimensions_for_domain(run.domain, run.dimension_keys)


def study_frames(run: PanelRun) -> dict[str, Any]:
    """The frames engine.study.study_figures reads, built from the run's stored debates."""
    debates = list(PanelDebate.objects.filter(run=run).select_related("dimension").order_by("id"))
    idea_ids = {d.idea_id for d in debates}
    dims = {d.dimension_id: d.dimension.key for d in debates}
    humans = pd.DataFrame(
        list(
            Rating.objects.filter(
                status=Rating.Status.SCORED, idea_id__in=idea_ids, dimension_id__in=list(dims)
            ).values_list("idea_id", "dimension_id", "reviewer_id", "score")
        ),
        columns=["idea", "dimension", "reviewer", "score"],
    )
    humans["dimension"] = humans["dimension"].map(dims)
    humans["score"] = humans["score"].astype(float)
    rows, member_rows, rounds = [], [], {}
    for d in debates:
        rows.append(
            {
                "debate": d.id,
                "idea": d.idea_id,
                "dimension": d.dimension.key,
                "single": d.single_score,
                "before": d.before_score,
                "after": d.after_score,
            }
        )
        parsed = [{int(k): int(v) for k, v in r.items()} for r in d.rounds]
        rounds[d.id] = parsed
        if parsed:
            for member, first in parsed[0].items():
                member_rows.append(
                    {
                        "debate": d.id,
                        "idea": d.idea_id,
                        "dimension": d.dimension.key,
                        "member": member,
                        "before": float(first),
                        "after": float(parsed[-1].get(member, first)),
                    }
                )
    persona_reviewer = {
        p.id: p.reviewer_id for p in run.personas.all() if p.reviewer_id is not None
    }
    return {
        "humans": humans,
        "debates": pd.DataFrame(
            rows, columns=["debate", "idea", "dimension", "single", "before", "after"]
        ).astype({"single": float, "before": float, "after": float}),
        "members": pd.DataFrame(
            member_rows, columns=["debate", "idea", "dimension", "member", "before", "after"]
        ),
        "persona_reviewer": persona_reviewer,
        "rounds": rounds,
    }


def run_usage(run: PanelRun) -> dict[str, int]:
    """Calls and tokens, recomputed from the stored turns."""
    turns = PanelTurn.objects.filter(run=run)
    calls = sum(turns.values_list("attempts", flat=True))
    agg = turns.aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    return {"calls": calls, "prompt_tokens": agg["p"] or 0, "completion_tokens": agg["c"] or 0}


@dataclass(frozen=True)
class PanelScore:
    """What another page may show of a panel's verdict: always labelled as judges."""

    run_id: int
    persona_source: str
    model: str
    dimension: str
    dimension_name: str
    single: int | None
    before: float | None
    after: float | None
    stop_reason: str
    debate_rounds: int
    synthesis: str
    label: str = "Panel of LLM judges (not reviewers)"


# Above this many ideas asked for, the debated ideas are read first (panel_scores_for_ideas).
MANY_IDEAS = 500


def panel_scores_for_ideas(*, idea_ids: Iterable[int]) -> dict[int, list[PanelScore]]:
    """The latest finished panel's scores per idea and dimension, for Decide and the idea page.

    Returns {idea_id: [PanelScore per dimension]}; ideas no finished run scored are absent.
    Only runs with status done or stopped count (a stopped run's finished debates are whole).
    These are judge scores: callers must show them apart from (never averaged into) people's.
    """
    ids = set(idea_ids)
    finished = PanelDebate.objects.filter(
        run__status__in=[PanelRun.Status.DONE, PanelRun.Status.STOPPED]
    )
    if len(ids) > MANY_IDEAS:
        # Decide shows a whole domain (thousands of ideas at scale), and an IN list of them all
        # cost more to build than the page's other work; panels debate few ideas (LLM calls),
        # so the debated ones are read first and only those of the shown ideas asked for.
        ids &= set(finished.order_by().values_list("idea_id", flat=True).distinct())
        if not ids:
            return {}
    debates = (
        finished.filter(idea_id__in=sorted(ids))
        .select_related("run", "dimension")
        .order_by("-run__created_at", "-run_id", "dimension__position")
    )
    latest_run: dict[int, int] = {}
    out: dict[int, list[PanelScore]] = defaultdict(list)
    for d in debates:
        run_id = latest_run.setdefault(d.idea_id, d.run_id)
        if d.run_id != run_id:
            continue
        out[d.idea_id].append(
            PanelScore(
                run_id=d.run_id,
                persona_source=d.run.get_persona_source_display(),
                model=d.run.model,
                dimension=d.dimension.key,
                dimension_name=d.dimension.name,
                single=d.single_score,
                before=d.before_score,
                after=d.after_score,
                stop_reason=d.stop_reason,
                debate_rounds=d.debate_rounds,
                synthesis=d.synthesis,
            )
        )
    return dict(out)


def runs_for(*, domain: Domain | None = None, limit: int = 20) -> list[PanelRun]:
    qs = PanelRun.objects.select_related("domain")
    if domain is not None:
        qs = qs.filter(domain=domain)
    return list(qs[:limit])


def run_turns(run: PanelRun, *, limit: int = 200) -> list[PanelTurn]:
    return list(PanelTurn.objects.filter(run=run).order_by("id")[:limit])


def usage_by_dimension(run: PanelRun) -> dict[str, dict[str, int]]:
    rows = (
        PanelTurn.objects.filter(run=run)
        .order_by()
        .values("dimension__key")
        .annotate(
            calls=Sum("attempts"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens")
        )
    )
    return {
        r["dimension__key"]: {
            "calls": int(r["calls"] or 0),
            "tokens": int((r["prompt"] or 0) + (r["completion"] or 0)),
        }
        for r in rows
    }
