"""Reads about assignments: each reviewer's load per domain, domain coverage, queues."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Case, Count, Q, QuerySet, Value, When

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.models import Domain, Idea
from apps.screening.models import Assignment

_PENDING = Q(status=Assignment.Status.PENDING)
_COMPLETED = Q(status=Assignment.Status.COMPLETED)
_DECLINED = Q(status=Assignment.Status.DECLINED)


@dataclass
class ReviewerLoad:
    reviewer: User
    domain: Domain
    qualified: bool = True  # False when assigned ideas of a domain not on their profile
    assigned: int = 0
    pending: int = 0
    completed: int = 0
    declined: int = 0

    @property
    def done(self) -> int:
        return self.completed + self.declined

    @property
    def progress_percent(self) -> int:
        return round(100 * self.done / self.assigned) if self.assigned else 0


@dataclass
class DomainLoad:
    domain: Domain
    ideas: int = 0
    unassigned_ideas: int = 0
    assignments: int = 0
    done: int = 0
    reviewers: list[ReviewerLoad] = field(default_factory=list)

    @property
    def progress_percent(self) -> int:
        return round(100 * self.done / self.assignments) if self.assignments else 0


def reviewer_load(*, domain: Domain | None = None) -> list[ReviewerLoad]:
    """Assigned/pending/completed/declined counts per (reviewer, domain).

    Every reviewer qualified for a domain appears, even with nothing assigned; so does a reviewer
    holding assignments in a domain not on their profile (flagged qualified=False). Three queries.
    """
    memberships = ReviewerProfile.domains.through.objects.filter(
        reviewerprofile__user__role=User.Role.REVIEWER
    )
    counts = Assignment.objects.values("reviewer_id", "idea__patent__domain_id").annotate(
        assigned=Count("id"),
        pending=Count("id", filter=_PENDING),
        completed=Count("id", filter=_COMPLETED),
        declined=Count("id", filter=_DECLINED),
    )
    if domain is not None:
        memberships = memberships.filter(domain=domain)
        counts = counts.filter(idea__patent__domain=domain)
    pairs = set(memberships.values_list("reviewerprofile__user_id", "domain_id"))
    count_rows = {(c["reviewer_id"], c["idea__patent__domain_id"]): c for c in counts}
    keys = pairs | set(count_rows)
    users = User.objects.select_related("reviewer_profile").in_bulk({k[0] for k in keys})
    domains = Domain.objects.in_bulk({k[1] for k in keys})
    rows: list[ReviewerLoad] = []
    for reviewer_id, domain_id in keys:
        row: Mapping[str, Any] = count_rows.get((reviewer_id, domain_id), {})
        rows.append(
            ReviewerLoad(
                reviewer=users[reviewer_id],
                domain=domains[domain_id],
                qualified=(reviewer_id, domain_id) in pairs,
                assigned=row.get("assigned", 0),
                pending=row.get("pending", 0),
                completed=row.get("completed", 0),
                declined=row.get("declined", 0),
            )
        )
    rows.sort(key=lambda r: (r.domain.name, r.reviewer.username))
    return rows


def domain_load() -> list[DomainLoad]:
    """Every domain with its idea count, ideas nobody is assigned, totals and reviewer rows."""
    domains = list(
        Domain.objects.annotate(
            n_ideas=Count("patents__ideas", distinct=True),
        ).order_by("name")
    )
    unassigned = dict(
        Idea.objects.filter(assignments__isnull=True)
        .values_list("patent__domain_id")
        .annotate(n=Count("id"))
        .values_list("patent__domain_id", "n")
    )
    by_domain: dict[int, list[ReviewerLoad]] = defaultdict(list)
    for row in reviewer_load():
        by_domain[row.domain.pk].append(row)
    result = []
    for d in domains:
        reviewers = by_domain.get(d.pk, [])
        result.append(
            DomainLoad(
                domain=d,
                ideas=d.n_ideas,
                unassigned_ideas=unassigned.get(d.pk, 0),
                assignments=sum(r.assigned for r in reviewers),
                done=sum(r.done for r in reviewers),
                reviewers=reviewers,
            )
        )
    return result


def assignment_list(
    *,
    reviewer_id: int | None = None,
    idea_id: int | None = None,
    domain_key: str | None = None,
    status: str | None = None,
) -> QuerySet[Assignment]:
    qs = Assignment.objects.select_related("reviewer", "idea__patent__domain", "assigned_by")
    if reviewer_id is not None:
        qs = qs.filter(reviewer_id=reviewer_id)
    if idea_id is not None:
        qs = qs.filter(idea_id=idea_id)
    if domain_key:
        qs = qs.filter(idea__patent__domain__key=domain_key)
    if status:
        qs = qs.filter(status=status)
    return qs.order_by("-created_at", "-id")


def assignment_queue_for(*, reviewer: User, status: str | None = None) -> QuerySet[Assignment]:
    """A reviewer's own assignments, still-to-rate first."""
    qs = Assignment.objects.filter(reviewer=reviewer).select_related("idea__patent__domain")
    if status:
        qs = qs.filter(status=status)
    pending_first = Case(When(status=Assignment.Status.PENDING, then=Value(0)), default=Value(1))
    return qs.order_by(pending_first, "idea__external_id")


def assignable_reviewers() -> QuerySet[User]:
    return (
        User.objects.filter(role=User.Role.REVIEWER, is_active=True)
        .prefetch_related("reviewer_profile__domains")
        .order_by("username")
    )
