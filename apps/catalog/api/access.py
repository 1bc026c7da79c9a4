"""Who sees which catalog rows through the API: the one place for catalog access control.

Managers and admins see everything. A reviewer sees the patents and ideas of the domains on their
profile, plus any idea assigned to them (an admin may have assigned one outside those domains).
"""

from __future__ import annotations

from django.db.models import Q, QuerySet

from apps.accounts.models import User
from apps.catalog.models import Idea, Patent


def _reviewer_domain_ids(user: User) -> list[int]:
    profile = getattr(user, "reviewer_profile", None)
    return list(profile.domains.values_list("pk", flat=True)) if profile is not None else []


def ideas_visible_to(user: User) -> QuerySet[Idea]:
    qs = Idea.objects.select_related("patent__domain")
    if user.can_read_all_ratings:
        return qs
    if not user.is_reviewer:
        return qs.none()
    return qs.filter(
        Q(patent__domain_id__in=_reviewer_domain_ids(user)) | Q(assignments__reviewer=user)
    ).distinct()


def patents_visible_to(user: User) -> QuerySet[Patent]:
    qs = Patent.objects.select_related("domain")
    if user.can_read_all_ratings:
        return qs
    if not user.is_reviewer:
        return qs.none()
    return qs.filter(
        Q(domain_id__in=_reviewer_domain_ids(user)) | Q(ideas__assignments__reviewer=user)
    ).distinct()
