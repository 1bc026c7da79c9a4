"""The reviewer's stored shortlists (JudgeShortlist; engine.shortlist): stored when a prediction
run finishes (services.finals), and rebuilt from the finished runs after a restore.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import cast

from django.conf import settings
from django.db import transaction

from apps.accounts.models import User
from apps.judges import selectors
from apps.judges.engine import shortlist
from apps.judges.models import (
    JudgeFinal,
    JudgeRun,
    JudgeShortlist,
)
from apps.screening.models import Dimension

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


def _store_shortlist(run: JudgeRun, finals: list[JudgeFinal]) -> None:
    """The reviewer's shortlists for the run's domain (JudgeShortlist; engine.shortlist):

    - per dimension of this run, from its finals, replacing the run's own;
    - over all dimensions, from the newest prediction run of every scope of this reviewer and
      domain (automatic prediction runs are one per dimension), this run standing for its own
      scope; stored with this run, replacing the reviewer's previous all-dimensions list.
    Serialised per reviewer (a row lock), so two runs finishing together leave one list."""
    reviewer_id = cast(int, run.reviewer_id)
    dims = {d.id: d for d in selectors.dimensions_for_domain(run.domain)}
    size = int(getattr(settings, "JUDGE_SHORTLIST_SIZE", 10))
    own = [e for e in shortlist.shortlists(_shortlist_candidates(finals, dims), size=size)]
    with transaction.atomic():
        User.objects.select_for_update().filter(id=reviewer_id).first()
        newest: dict[str, int] = {}
        for other_id, scope in (
            JudgeRun.objects.filter(
                purpose=JudgeRun.Purpose.PREDICTION,
                reviewer_id=reviewer_id,
                domain_id=run.domain_id,
                status__in=[JudgeRun.Status.DONE, JudgeRun.Status.RUNNING],
                finals__isnull=False,
            )
            .exclude(scope_key=run.scope_key)
            .distinct()
            .order_by("id")
            .values_list("id", "scope_key")
        ):
            newest[scope] = other_id
        others = list(JudgeFinal.objects.filter(run_id__in=list(newest.values())))
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
                    dimension_id=e.dimension_id,
                    idea_id=e.idea_id,
                    rank=e.rank,
                    predicted_score=e.predicted_score,
                    confidence=e.confidence,
                    signal=e.signal,
                    panel_size=e.panel_size,
                )
                for e in entries
            ],
            batch_size=1000,
        )


def judge_shortlists_rebuild() -> int:
    """Store every reviewer's shortlists again from the finished prediction runs (after a
    restore: shortlists are derived rows). Oldest run first, so each reviewer's all-dimensions
    list ends up built by their newest run, as when the runs finished. Returns runs replayed."""
    runs = JudgeRun.objects.filter(
        purpose=JudgeRun.Purpose.PREDICTION, status=JudgeRun.Status.DONE, reviewer__isnull=False
    ).order_by("id")
    n = 0
    for run in runs.select_related("domain"):
        _store_shortlist(run, list(JudgeFinal.objects.filter(run=run)))
        n += 1
    return n
