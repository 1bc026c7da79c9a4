"""Assigning reviewers to ideas, by hand and in bulk.

A reviewer may be assigned only ideas of a domain listed on their ReviewerProfile. Assignments are
unique per (reviewer, idea), so every function here is safe to run twice.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.db.models import Count, Q

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.core.errors import ApplicationError, ErrorCollector, FieldError, PermissionDenied
from apps.screening.models import Assignment

# Declined assignments neither count towards an idea's panel nor towards a reviewer's load:
# the reviewer recused themselves, so the idea still needs someone who will rate it.
ACTIVE = Q(status__in=[Assignment.Status.PENDING, Assignment.Status.COMPLETED])


def _check_actor(actor: User | None) -> None:
    # actor=None is the system itself (demo data, management commands).
    if actor is not None and not actor.is_admin:
        raise PermissionDenied("Only admins assign reviewers.")


def _qualification_error(
    *, reviewer: User, idea: Idea, field: str = "reviewer"
) -> FieldError | None:
    if not reviewer.is_reviewer:
        return FieldError(field=field, message="is not a reviewer", value=reviewer.username)
    domain_id = idea.patent.domain_id
    qualified = (
        hasattr(reviewer, "reviewer_profile")
        and reviewer.reviewer_profile.domains.filter(pk=domain_id).exists()
    )
    if not qualified:
        return FieldError(
            field=field,
            message=f"is not qualified for the domain of idea {idea.external_id} "
            f"({idea.patent.domain.name})",
            value=reviewer.username,
        )
    return None


@transaction.atomic
def assignment_create(*, reviewer: User, idea: Idea, actor: User | None) -> Assignment:
    """Assign one idea to one reviewer qualified for its domain.

    Idempotent: when the assignment already exists it is returned unchanged (whatever its status).
    """
    _check_actor(actor)
    problem = _qualification_error(reviewer=reviewer, idea=idea)
    if problem is not None:
        raise ApplicationError("The assignment was not made.", errors=[problem])
    existing = Assignment.objects.filter(reviewer=reviewer, idea=idea).first()
    if existing is not None:
        return existing
    try:
        # A savepoint, so that losing a race to a concurrent identical request is not fatal.
        with transaction.atomic():
            return Assignment.objects.create(reviewer=reviewer, idea=idea, assigned_by=actor)
    except IntegrityError:
        return Assignment.objects.get(reviewer=reviewer, idea=idea)


@transaction.atomic
def assignments_create(
    *, reviewer: User, ideas: Iterable[Idea], actor: User | None
) -> list[Assignment]:
    """Assign several ideas to one reviewer, all or nothing.

    Every idea the reviewer is not qualified for is reported (field "ideas", value = the idea's id);
    ideas already assigned to the reviewer are returned as they are.
    """
    _check_actor(actor)
    ideas = list(ideas)
    if not ideas:
        raise ApplicationError(
            "The assignment was not made.",
            errors=[FieldError(field="ideas", message="name at least one idea")],
        )
    if not reviewer.is_reviewer:
        raise ApplicationError(
            "The assignment was not made.",
            errors=[
                FieldError(field="reviewer", message="is not a reviewer", value=reviewer.username)
            ],
        )
    allowed = set(
        reviewer.reviewer_profile.domains.values_list("pk", flat=True)
        if hasattr(reviewer, "reviewer_profile")
        else []
    )
    collector = ErrorCollector()
    for idea in ideas:
        if idea.patent.domain_id not in allowed:
            collector.add(
                "ideas",
                f"{reviewer.display_name} is not qualified for {idea.patent.domain.name}",
                value=idea.external_id,
            )
    collector.raise_if_any("The assignment was not made.")
    existing = {
        a.idea_id: a
        for a in Assignment.objects.filter(reviewer=reviewer, idea__in=[i.pk for i in ideas])
    }
    new = [
        Assignment(reviewer=reviewer, idea=idea, assigned_by=actor)
        for idea in {i.pk: i for i in ideas}.values()
        if idea.pk not in existing
    ]
    Assignment.objects.bulk_create(new, ignore_conflicts=True)
    return list(
        Assignment.objects.filter(reviewer=reviewer, idea__in=[i.pk for i in ideas]).select_related(
            "idea"
        )
    )


@transaction.atomic
def assignment_delete(*, assignment: Assignment, actor: User | None) -> None:
    """Remove an assignment that has not been worked on yet (ratings are never orphaned)."""
    _check_actor(actor)
    locked = Assignment.objects.select_for_update().filter(pk=assignment.pk).first()
    if locked is None:
        return  # already gone: deleting twice is not an error
    if locked.status != Assignment.Status.PENDING:
        raise ApplicationError(
            "Only assignments still to rate can be removed; this one is "
            f"{locked.get_status_display().lower()}.",
            errors=[FieldError(field="status", message="must be pending", value=locked.status)],
        )
    locked.delete()


def _domain_reviewers(domain: Domain) -> list[User]:
    return list(
        User.objects.filter(
            role=User.Role.REVIEWER, is_active=True, reviewer_profile__domains=domain
        ).order_by("pk")
    )


@transaction.atomic
def assignment_bulk_balanced(
    *, domain: Domain, per_idea: int, actor: User | None, reviewers: Iterable[User] | None = None
) -> int:
    """Give every idea of the domain `per_idea` active reviewers, spreading the work evenly.

    For each idea (in id order) with fewer than `per_idea` pending or completed assignments, the
    missing places go to the domain's reviewers with the lowest active load in this domain (ties:
    lowest user id), never to a reviewer already assigned to that idea, declined ones included.
    Returns how many assignments were created; a second run creates none.

    Concurrency: the domain row is locked, so two bulk runs on one domain queue up instead of
    both counting the same gaps.
    """
    _check_actor(actor)
    if isinstance(per_idea, bool) or not isinstance(per_idea, int) or per_idea < 1:
        raise ApplicationError(
            "Nothing was assigned.",
            errors=[
                FieldError(
                    field="per_idea",
                    message="must be a whole number of at least 1",
                    value=str(per_idea),
                )
            ],
        )
    Domain.objects.select_for_update().filter(pk=domain.pk).first()

    qualified = _domain_reviewers(domain)
    if reviewers is not None:
        chosen = {r.pk for r in reviewers}
        qualified_ids = {r.pk for r in qualified}
        collector = ErrorCollector()
        for user in User.objects.filter(pk__in=chosen - qualified_ids).order_by("username"):
            collector.add("reviewers", f"is not a reviewer of {domain.name}", value=user.username)
        collector.raise_if_any("Nothing was assigned.")
        qualified = [r for r in qualified if r.pk in chosen]
    if per_idea > len(qualified):
        raise ApplicationError(
            "Nothing was assigned.",
            errors=[
                FieldError(
                    field="per_idea",
                    message=f"{domain.name} has only {len(qualified)} reviewer(s) to choose from",
                    value=str(per_idea),
                )
            ],
        )

    domain_assignments = Assignment.objects.filter(idea__patent__domain=domain)
    taken: dict[int, set[int]] = defaultdict(set)  # idea -> every reviewer already on it
    active_count: dict[int, int] = defaultdict(int)  # idea -> active assignments
    load: dict[int, int] = defaultdict(int)  # reviewer -> active assignments in this domain
    for idea_id, reviewer_id, status in domain_assignments.values_list(
        "idea_id", "reviewer_id", "status"
    ):
        taken[idea_id].add(reviewer_id)
        if status != Assignment.Status.DECLINED:
            active_count[idea_id] += 1
            load[reviewer_id] += 1

    idea_ids = (
        Idea.objects.filter(patent__domain=domain)
        .annotate(
            active=Count(
                "assignments",
                filter=Q(
                    assignments__status__in=[Assignment.Status.PENDING, Assignment.Status.COMPLETED]
                ),
            )
        )
        .filter(active__lt=per_idea)
        .order_by("pk")
        .values_list("pk", flat=True)
    )

    # A heap of (load, reviewer id): the least-loaded reviewer is always on top.
    heap = [(load[r.pk], r.pk) for r in qualified]
    heapq.heapify(heap)
    new: list[Assignment] = []
    actor_id = actor.pk if actor is not None else None
    for idea_id in idea_ids:
        missing = per_idea - active_count[idea_id]
        skipped: list[tuple[int, int]] = []
        picked: list[tuple[int, int]] = []
        while missing > 0 and heap:
            current, reviewer_id = heapq.heappop(heap)
            if reviewer_id in taken[idea_id]:
                skipped.append((current, reviewer_id))
                continue
            new.append(
                Assignment(reviewer_id=reviewer_id, idea_id=idea_id, assigned_by_id=actor_id)
            )
            picked.append((current + 1, reviewer_id))
            missing -= 1
        for item in skipped + picked:
            heapq.heappush(heap, item)
    Assignment.objects.bulk_create(new, batch_size=2000)
    return len(new)
