"""The stored shortlists (engine.shortlist): the reviewer's (JudgeShortlist), stored when a
prediction run finishes (services.finals), and the domain's panel shortlist (PanelShortlist);
both rebuilt from the finished runs after a restore.

The panel shortlist (issue 17: "per domain, the same for the panel"): ``panel_shortlist_store``
ranks (engine.shortlist.panel_shortlists) the newest predictions of every reviewer of the
domain: per reviewer and dimension, the newest finished prediction run of each scope, its first
kind of SHORTLIST_KINDS at its largest k, the finals the reviewer's own shortlists rank; stored
in ``PanelShortlist``, replacing the domain's previous lists. ``panel_shortlist_after_run`` is
called once a prediction run's DONE status is committed (services.execution): the domain is
recomputed only when no other prediction run of the domain is queued or running, so a burst of
automatic runs (one per reviewer and domain) recomputes it once, by the last run to finish
(each run's status is committed before it looks at the others', so the last one sees them all
finished).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, cast

from django.conf import settings
from django.db import transaction
from django.db.models import Count

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.judges import selectors
from apps.judges.engine import shortlist
from apps.judges.models import (
    JudgeFinal,
    JudgeRun,
    JudgeShortlist,
    PanelShortlist,
)
from apps.screening.models import Dimension, Rating

# A shortlist comes from the personalized judge when there is one (the reviewer's own scale),
# else aggregate, else zero-shot.
SHORTLIST_KINDS = ("personalized", "aggregate", "zero_shot")


def _shortlist_candidates(
    finals: Iterable[JudgeFinal], dims: dict[int, Dimension]
) -> list[shortlist.Candidate]:
    """The finals a shortlist ranks: per dimension, the first kind of SHORTLIST_KINDS present,
    at its largest k."""
    by_dim: dict[int, list[JudgeFinal]] = defaultdict(list)
    for f in finals:
        if f.dimension_id in dims:
            by_dim[f.dimension_id].append(f)
    out = []
    for dimension_id, rows in by_dim.items():
        kinds = {f.kind for f in rows}
        kind = next((k for k in SHORTLIST_KINDS if k in kinds), None)
        top_k = max((f.k for f in rows if f.kind == kind), default=0)
        d = dims[dimension_id]
        out += [
            shortlist.Candidate(
                idea_id=f.idea_id,
                dimension_id=f.dimension_id,
                score=f.score,
                confidence=f.confidence,
                signal=f.signal,
                panel_size=f.panel_size,
                scale_min=d.scale_min,
                scale_max=d.scale_max,
            )
            for f in rows
            if f.kind == kind and f.k == top_k
        ]
    return out


def store_shortlist(run: JudgeRun, finals: list[JudgeFinal]) -> None:
    """The reviewer's shortlists for the run's domain (JudgeShortlist; engine.shortlist):

    - per dimension of this run, from its finals, replacing the run's own;
    - over all dimensions, from this run and the other current prediction runs of this
      reviewer and domain (selectors.current_run_ids, this run the newest); stored with this
      run, replacing the reviewer's previous all-dimensions list.
    Serialised per reviewer (a row lock), so two runs finishing together leave one list."""
    reviewer_id = cast(int, run.reviewer_id)
    dims = {d.id: d for d in selectors.dimensions_for_domain(run.domain)}
    size = int(getattr(settings, "JUDGE_SHORTLIST_SIZE", 10))
    own = [e for e in shortlist.shortlists(_shortlist_candidates(finals, dims), size=size)]
    with transaction.atomic():
        User.objects.select_for_update().filter(id=reviewer_id).first()
        earlier = list(
            JudgeRun.objects.filter(
                purpose=JudgeRun.Purpose.PREDICTION,
                reviewer_id=reviewer_id,
                domain_id=run.domain_id,
                status__in=[JudgeRun.Status.DONE, JudgeRun.Status.RUNNING],
                finals__isnull=False,
            )
            .exclude(id=run.id)
            .distinct()
            .order_by("id")
            .values_list(*selectors.CURRENT_RUN_FIELDS)
        )
        this = tuple(getattr(run, field) for field in selectors.CURRENT_RUN_FIELDS)
        current = [i for i in selectors.current_run_ids([*earlier, this]) if i != run.id]
        others = list(JudgeFinal.objects.filter(run_id__in=current))
        combined = _shortlist_candidates([*finals, *others], dims) if others else None
        overall = [
            e
            for e in shortlist.shortlists(
                combined if combined is not None else _shortlist_candidates(finals, dims),
                size=size,
            )
            if e.dimension_id is None
        ]
        entries = [e for e in own if e.dimension_id is not None] + overall
        JudgeShortlist.objects.filter(run_id=run.id).delete()
        JudgeShortlist.objects.filter(
            reviewer_id=reviewer_id, domain_id=run.domain_id, dimension__isnull=True
        ).delete()
        JudgeShortlist.objects.bulk_create(
            [
                JudgeShortlist(
                    run_id=run.id,
                    reviewer_id=reviewer_id,
                    domain_id=run.domain_id,
                    **_entry_fields(e),
                )
                for e in entries
            ],
            batch_size=1000,
        )


def _entry_fields(entry: shortlist.Entry) -> dict[str, Any]:
    """The columns a reviewer's and a domain's shortlist rows share, from one engine entry."""
    return {
        "dimension_id": entry.dimension_id,
        "idea_id": entry.idea_id,
        "rank": entry.rank,
        "predicted_score": entry.predicted_score,
        "confidence": entry.confidence,
        "signal": entry.signal,
        "panel_size": entry.panel_size,
    }


def judge_shortlists_rebuild() -> int:
    """Store every reviewer's shortlists again from the finished prediction runs (after a
    restore: shortlists are derived rows). Oldest run first, so each reviewer's all-dimensions
    list ends up built by their newest run, as when the runs finished. Returns runs replayed."""
    runs = JudgeRun.objects.filter(
        purpose=JudgeRun.Purpose.PREDICTION, status=JudgeRun.Status.DONE, reviewer__isnull=False
    ).order_by("id")
    n = 0
    domains = {}
    for run in runs.select_related("domain"):
        store_shortlist(run, list(JudgeFinal.objects.filter(run=run)))
        domains[run.domain_id] = run.domain
        n += 1
    for domain in domains.values():
        panel_shortlist_store(domain=domain)
    return n


def _panel_candidates(domain: Domain) -> list[shortlist.PanelCandidate]:
    current = selectors.current_run_ids(
        JudgeRun.objects.filter(
            purpose=JudgeRun.Purpose.PREDICTION,
            domain=domain,
            status=JudgeRun.Status.DONE,
            reviewer__isnull=False,
        )
        .order_by("id")
        .values_list(*selectors.CURRENT_RUN_FIELDS)
    )
    if not current:
        return []
    scales = {
        d_id: (lo, hi)
        for d_id, lo, hi in Dimension.objects.values_list("id", "scale_min", "scale_max")
    }
    rows = JudgeFinal.objects.filter(run_id__in=current).values_list(
        "run_id", "reviewer_id", "dimension_id", "idea_id", "kind", "k", "score", "confidence",
        "signal",
    )  # fmt: skip
    by_cell: dict[tuple[int, int], list[tuple]] = defaultdict(list)
    for row in rows.iterator(chunk_size=10000):
        by_cell[(row[1], row[2])].append(row)
    out = []
    for (reviewer_id, dimension_id), cell in by_cell.items():
        kinds = {r[4] for r in cell}
        kind = next((k for k in SHORTLIST_KINDS if k in kinds), None)
        top_k = max((r[5] for r in cell if r[4] == kind), default=0)
        newest_run: dict[int, int] = {}
        for r in cell:  # one prediction per idea: the newest run's
            if r[4] == kind and r[5] == top_k:
                newest_run[r[3]] = max(newest_run.get(r[3], 0), r[0])
        lo, hi = scales[dimension_id]
        out += [
            shortlist.PanelCandidate(
                reviewer_id=reviewer_id,
                idea_id=r[3],
                dimension_id=dimension_id,
                score=r[6],
                confidence=r[7],
                signal=r[8],
                scale_min=lo,
                scale_max=hi,
            )
            for r in cell
            if r[4] == kind and r[5] == top_k and newest_run[r[3]] == r[0]
        ]
    return out


def panel_shortlist_store(*, domain: Domain) -> int:
    """Rank and store the domain's panel shortlists; returns the entries stored."""
    size = int(getattr(settings, "JUDGE_SHORTLIST_SIZE", 10))
    readers = {
        (d_id, idea_id): n
        for d_id, idea_id, n in Rating.objects.filter(
            idea__patent__domain=domain, status=Rating.Status.SCORED
        )
        .values("dimension_id", "idea_id")
        .annotate(n=Count("reviewer_id", distinct=True))
        .values_list("dimension_id", "idea_id", "n")
    }
    entries = shortlist.panel_shortlists(_panel_candidates(domain), readers=readers, size=size)
    with transaction.atomic():
        Domain.objects.select_for_update().filter(id=domain.id).first()
        PanelShortlist.objects.filter(domain=domain).delete()
        PanelShortlist.objects.bulk_create(
            [PanelShortlist(domain=domain, **_entry_fields(e)) for e in entries],
            batch_size=1000,
        )
    return len(entries)


def panel_shortlist_after_run(run: JudgeRun) -> int | None:
    """Recompute the run's domain unless other prediction runs of the domain are still queued
    or running (module docstring); None when skipped."""
    if (
        JudgeRun.objects.filter(
            purpose=JudgeRun.Purpose.PREDICTION,
            domain_id=run.domain_id,
            status__in=JudgeRun.ACTIVE,
        )
        .exclude(id=run.id)
        .exists()
    ):
        return None
    return panel_shortlist_store(domain=run.domain)
