"""Who sees which catalog rows through the API: the one place for catalog access control.

Managers and admins see everything. A reviewer sees the patents and ideas of the domains on their
profile, plus any idea assigned to them (an admin may have assigned one outside those domains).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea, Patent


def _reviewer_domains(user: User) -> QuerySet[Domain, Any]:
    """The domains on the reviewer's profile, as a subquery (no query of its own)."""
    return Domain.objects.filter(reviewers__user=user).values("pk")


def ideas_visible_to(user: User) -> QuerySet[Idea]:
    qs = Idea.objects.select_related("patent__domain")
    if user.can_read_all_ratings:
        return qs
    if not user.is_reviewer:
        return qs.none()
    assigned = Idea.objects.filter(assignments__reviewer=user).values("pk")
    return qs.filter(Q(patent__domain__in=_reviewer_domains(user)) | Q(pk__in=assigned))


def patents_visible_to(user: User) -> QuerySet[Patent]:
    qs = Patent.objects.select_related("domain")
    if user.can_read_all_ratings:
        return qs
    if not user.is_reviewer:
        return qs.none()
    assigned = Patent.objects.filter(ideas__assignments__reviewer=user).values("pk")
    return qs.filter(Q(domain__in=_reviewer_domains(user)) | Q(pk__in=assigned))
