"""Reads about reviewers' rating histories: counts per domain and dimension, unrated ideas, the
ratings still needed before a judge can learn a reviewer."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.models import Domain, Idea
from apps.judges.models import (
    JudgeConfig,
)
from apps.judges.selectors.common import dimensions_for_domain
from apps.judges.selectors.runs import active_auto_configs
from apps.screening.models import Dimension, Rating


def reviewer_history_counts(*, reviewer_id: int) -> list[Mapping[str, Any]]:
    """Scored ratings of one reviewer per (domain, dimension), in their domains."""
    return list(
        Rating.objects.filter(reviewer_id=reviewer_id, status=Rating.Status.SCORED)
        .values("idea__patent__domain_id", "dimension__key", "dimension_id")
        .annotate(n=Count("id"))
        .order_by("idea__patent__domain_id", "dimension__key")
    )


def reviewers_history_counts(*, reviewer_ids: Iterable[int]) -> list[dict[str, Any]]:
    """Scored ratings per (reviewer, domain, dimension key) for many reviewers: one aggregate
    query, rows {reviewer_id, domain_id, dimension, n}, ordered."""
    rows = (
        Rating.objects.filter(reviewer_id__in=list(reviewer_ids), status=Rating.Status.SCORED)
        .values_list("reviewer_id", "idea__patent__domain_id", "dimension__key")
        .annotate(n=Count("id"))
        .order_by("reviewer_id", "idea__patent__domain_id", "dimension__key")
    )
    return [{"reviewer_id": r, "domain_id": d, "dimension": k, "n": n} for r, d, k, n in rows]


def reviewers_profile_domain_ids(*, reviewer_ids: Iterable[int]) -> dict[int, set[int]]:
    """Reviewer id -> the domain ids of their profile (absent: no profile or no domains)."""
    out: dict[int, set[int]] = {}
    rows = ReviewerProfile.domains.through.objects.filter(
        reviewerprofile__user_id__in=list(reviewer_ids)
    ).values_list("reviewerprofile__user_id", "domain_id")
    for user_id, domain_id in rows:
        out.setdefault(user_id, set()).add(domain_id)
    return out


def reviewer_unrated_ideas(*, reviewer_id: int, domain: Domain) -> list[tuple[int, int]]:
    """(idea id, patent id) of the domain's ideas the reviewer never rated (no rating row at
    all, on any dimension), by idea id."""
    rated = Rating.objects.filter(reviewer_id=reviewer_id).values("idea_id")
    return list(
        Idea.objects.filter(patent__domain=domain)
        .exclude(id__in=rated)
        .order_by("id")
        .values_list("id", "patent_id")
    )


# Every reviewer's gaps (the alignment and predictions pages) take one aggregate over every
# scored rating: 200 ms of a 600 ms page at 102,000 ratings, seconds at a million
# (bench/bench_scale.py). So that list is kept in the cache under a version that every rating
# change replaces (services.scheduling.judge_ratings_changed, through forget_history_gaps): a
# list computed while a change commits is stored under the old version and never read. Profile
# and configuration edits change no rating: the list expires after HISTORY_GAPS_SECONDS.
HISTORY_GAPS_SECONDS = 600


def _gaps_keys() -> tuple[str, str]:
    prefix = f"{settings.JUDGE_CACHE_PREFIX}:history-gaps"
    return f"{prefix}:version", prefix


def forget_history_gaps() -> None:
    """Ratings changed: the next page computes every reviewer's gaps again."""
    version_key, _ = _gaps_keys()
    cache.set(version_key, uuid.uuid4().hex, timeout=None)


def history_gaps(*, reviewer_ids: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """Per reviewer, domain of their profile and dimension: ratings still needed for a judge.
    Every reviewer's (no reviewer_ids) come from the cache while no rating changed."""
    if reviewer_ids is not None:
        return _history_gaps(reviewer_ids=reviewer_ids)
    version_key, prefix = _gaps_keys()
    version = cache.get(version_key)
    if version is None:
        forget_history_gaps()
        version = cache.get(version_key)
    key = f"{prefix}:{version}"
    gaps = cache.get(key)
    if gaps is None:
        gaps = _history_gaps(reviewer_ids=None)
        cache.set(key, gaps, timeout=HISTORY_GAPS_SECONDS)
    return list(gaps)


def _history_gaps(*, reviewer_ids: Iterable[int] | None) -> list[dict[str, Any]]:
    configs = active_auto_configs() or list(JudgeConfig.objects.filter(is_active=True))
    min_history = min((c.min_history for c in configs), default=10)
    users = (
        User.objects.filter(role=User.Role.REVIEWER)
        .select_related("reviewer_profile")
        .prefetch_related("reviewer_profile__domains__rubric")
    )
    if reviewer_ids is not None:
        users = users.filter(id__in=list(reviewer_ids))
    counts: dict[tuple[int, int, str], int] = {}
    rows = (
        Rating.objects.filter(status=Rating.Status.SCORED, reviewer__in=users)
        .values_list("reviewer_id", "idea__patent__domain_id", "dimension__key")
        .annotate(n=Count("id"))
    )
    for reviewer_id, domain_id, dim, n in rows:
        counts[(reviewer_id, domain_id, dim)] = n
    out = []
    dims_of: dict[int, list[Dimension]] = {}
    for user in users.order_by("username"):
        profile = getattr(user, "reviewer_profile", None)
        if profile is None:
            continue
        for domain in profile.domains.all():
            if domain.id not in dims_of:
                dims_of[domain.id] = dimensions_for_domain(domain)
            for dim in dims_of[domain.id]:
                n = counts.get((user.id, domain.id, dim.key), 0)
                out.append(
                    {
                        "reviewer_id": user.id,
                        "reviewer": user.display_name,
                        "domain": domain.name,
                        "domain_key": domain.key,
                        "dimension": dim.key,
                        "dimension_name": dim.name,
                        "n": n,
                        "min_history": min_history,
                        "missing": max(0, min_history - n),
                    }
                )
    return out
