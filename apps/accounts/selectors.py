"""Reads for the admin's people page: every account and where it stands with its password."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Max

from apps.accounts.models import Invitation, User


@dataclass
class AccountRow:
    user: User
    status: str  # "active" | "password" | "none"
    status_label: str
    last_invited: datetime | None


def accounts_for_invitations() -> list[AccountRow]:
    """Active accounts, those still without a password first, then by role and username."""
    invited = dict(
        Invitation.objects.values("user_id")
        .annotate(last=Max("created_at"))
        .values_list("user_id", "last")
    )
    rows: list[AccountRow] = []
    for user in User.objects.filter(is_active=True).order_by("role", "username"):
        if user.last_login is not None:
            status, label = "active", "Has signed in"
        elif user.has_usable_password():
            status, label = "password", "Has a password, never signed in"
        else:
            status, label = "none", "No password yet"
        rows.append(AccountRow(user, status, label, invited.get(user.pk)))
    order = {"none": 0, "password": 1, "active": 2}
    rows.sort(key=lambda r: order[r.status])
    return rows
