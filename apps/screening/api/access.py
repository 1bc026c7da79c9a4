"""Who reads which ratings through the API: the one place for rating access control.

Managers and admins read every rating; a reviewer reads only their own (blind review). Rows a user
may not read are reported as not found, so their existence is not revealed.
"""

from __future__ import annotations

from django.db.models import QuerySet

from apps.accounts.models import User
from apps.core.errors import NotFound
from apps.screening.models import Rating


def ratings_visible_to(user: User) -> QuerySet[Rating]:
    qs = Rating.objects.select_related("reviewer", "idea__patent__domain", "dimension")
    if user.can_read_all_ratings:
        return qs
    if user.is_reviewer:
        return qs.filter(reviewer=user)
    return qs.none()


def rating_for(user: User, pk: int) -> Rating:
    rating = ratings_visible_to(user).filter(pk=pk).first()
    if rating is None:
        raise NotFound(f"No rating with id {pk} is visible to you.")
    return rating
