"""Reads for the disagreement analytics: rating frame, scales, snapshots, idea drill-down."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Avg, Count, StdDev
from django.db.models.fields.json import KeyTransform

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.models import Idea
from apps.core.models import SNAPSHOT_NEWEST_FIRST
from apps.disagreement.models import MetricSlice, MetricSnapshot
from apps.screening.models import Rating
from apps.screening.selectors.frame import ratings_queryset


def background_groups() -> list[str]:
    """Every background label reviewers have (a free label), alphabetically."""
    return sorted(
        set(
            ReviewerProfile.objects.exclude(background="")
            .exclude(background__isnull=True)
            .values_list("background", flat=True)
            .distinct()
        )
    )


def snapshot_latest(*, scope: str, done_only: bool = True) -> MetricSnapshot | None:
    """The newest finished snapshot of a scope (without its heavy JSON loaded twice)."""
    qs = MetricSnapshot.objects.filter(scope=scope)
    if done_only:
        qs = qs.filter(status=MetricSnapshot.Status.DONE).order_by(*SNAPSHOT_NEWEST_FIRST)
    return qs.select_related("requested_by").first()


def latest_panel(*, scope: str) -> list[dict[str, Any]]:
    """The newest finished snapshot's panel sizes (its result's "panel": reliability by panel
    size per domain and dimension), picked out by the database without the rest of the
    result (every metric of every domain)."""
    part = (
        MetricSnapshot.objects.filter(scope=scope, status=MetricSnapshot.Status.DONE)
        .order_by(*SNAPSHOT_NEWEST_FIRST)
        .annotate(panel=KeyTransform("panel", "result"))
        .values_list("panel", flat=True)
        .first()
    )
    return part or []


def snapshot_in_progress(*, scope: str) -> MetricSnapshot | None:
    return (
        MetricSnapshot.objects.filter(
            scope=scope, status__in=[MetricSnapshot.Status.QUEUED, MetricSnapshot.Status.RUNNING]
        )
        .defer("result")
        .order_by("-created_at", "-id")
        .first()
    )


def snapshot_last_failure(*, scope: str, after: dt.datetime | None) -> MetricSnapshot | None:
    qs = MetricSnapshot.objects.filter(scope=scope, status=MetricSnapshot.Status.FAILED)
    if after is not None:
        qs = qs.filter(created_at__gt=after)
    return qs.defer("result").order_by("-created_at", "-id").first()


@dataclass
class Freshness:
    computed_at: dt.datetime | None
    n_ratings: int
    new_ratings: int
    latest_rating_at: dt.datetime | None


def snapshot_freshness(snapshot: MetricSnapshot) -> Freshness:
    """How many ratings changed after the newest change this snapshot saw."""
    qs = ratings_queryset(since=snapshot.since, until=snapshot.until)
    if snapshot.latest_rating_at is not None:
        qs = qs.filter(updated_at__gt=snapshot.latest_rating_at)
    return Freshness(
        computed_at=snapshot.computed_at,
        n_ratings=snapshot.n_ratings or 0,
        new_ratings=qs.count(),
        latest_rating_at=snapshot.latest_rating_at,
    )


def snapshot_slices(
    snapshot: MetricSnapshot, *, kind: str, domain: str | None = None, dimension: str | None = None
) -> list[dict[str, Any]]:
    """Rows of one heavy section, limited to a domain and/or dimension when given."""
    qs = MetricSlice.objects.filter(snapshot=snapshot, kind=kind)
    if domain:
        qs = qs.filter(domain=domain)
    if dimension:
        qs = qs.filter(dimension=dimension)
    out: list[dict[str, Any]] = []
    for rows in qs.order_by("domain", "dimension").values_list("rows", flat=True):
        out.extend(rows)
    return out


# --- idea drill-down ---------------------------------------------------------------------------


@dataclass
class IdeaScore:
    reviewer: User
    background: str
    status: str
    status_label: str
    score: int | None
    z: float | None
    rationale: str
    is_category: bool
    rated_at: dt.datetime


@dataclass
class IdeaDimensionRow:
    key: str
    name: str
    scale_min: int
    scale_max: int
    scores: list[IdeaScore] = field(default_factory=list)

    @property
    def raw_spread(self) -> int | None:
        values = [s.score for s in self.scores if s.score is not None and not s.is_category]
        return max(values) - min(values) if len(values) >= 2 else None

    @property
    def z_spread(self) -> float | None:
        values = [s.z for s in self.scores if s.z is not None]
        return max(values) - min(values) if len(values) >= 2 else None


def idea_ratings_detail(*, idea: Idea, include_categories: bool = False) -> list[IdeaDimensionRow]:
    """Every reviewer's rating of one idea, per dimension, with a calibrated (z) score.

    z = (score - the reviewer's mean on that dimension) / their standard deviation, over all of the
    reviewer's scored ratings of the dimension: it says how high the idea sits on *their* scale.
    Category levels (PBIG's "not B2B") are left out of the means and get no z unless
    ``include_categories``, as in the snapshot's figures. Three queries whatever the number of
    reviewers.
    """
    ratings = list(
        Rating.objects.filter(idea=idea)
        .select_related("reviewer", "reviewer__reviewer_profile", "dimension")
        .order_by("dimension__position", "reviewer__username")
    )
    reviewer_ids = {r.reviewer_id for r in ratings}
    dimension_ids = {r.dimension_id for r in ratings}
    category_levels = {
        r.dimension_id: {int(v) for v in (r.dimension.categories or [])}
        for r in ratings
        if r.dimension.categories and not include_categories
    }
    stats_qs = Rating.objects.filter(
        reviewer_id__in=reviewer_ids,
        dimension_id__in=dimension_ids,
        status=Rating.Status.SCORED,
    )
    for dimension_id, levels in category_levels.items():
        stats_qs = stats_qs.exclude(dimension_id=dimension_id, score__in=levels)
    stats = {
        (row["reviewer_id"], row["dimension_id"]): row
        for row in stats_qs.values("reviewer_id", "dimension_id")
        .annotate(mean=Avg("score"), sd=StdDev("score", sample=True), n=Count("id"))
        .order_by()
    }
    by_dim: dict[int, IdeaDimensionRow] = {}
    for r in ratings:
        row = by_dim.get(r.dimension_id)
        if row is None:
            row = by_dim[r.dimension_id] = IdeaDimensionRow(
                key=r.dimension.key,
                name=r.dimension.name,
                scale_min=r.dimension.scale_min,
                scale_max=r.dimension.scale_max,
            )
        z = None
        st = stats.get((r.reviewer_id, r.dimension_id))
        is_category = r.score is not None and r.score in category_levels.get(r.dimension_id, ())
        if r.score is not None and st and st["sd"] and not is_category:
            z = (r.score - float(st["mean"])) / float(st["sd"])
        profile = getattr(r.reviewer, "reviewer_profile", None)
        row.scores.append(
            IdeaScore(
                reviewer=r.reviewer,
                background=profile.background if profile else "",
                status=r.status,
                status_label=r.get_status_display(),
                score=r.score,
                z=z,
                rationale=r.rationale,
                is_category=is_category,
                rated_at=r.updated_at,
            )
        )
    return list(by_dim.values())


def ratings_exist() -> bool:
    return Rating.objects.exists()
