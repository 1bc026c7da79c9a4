"""Role checks in one place: DRF permission classes and a decorator for HTML views.

reviewer: rates assigned ideas, sees only their own ratings and their own judge.
manager:  reads everything (ratings, dashboards, exports), edits nothing.
admin:    imports, assigns, configures judges and starts runs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseBase
from rest_framework.permissions import SAFE_METHODS, BasePermission


def role_required(
    *roles: str,
) -> Callable[[Callable[..., HttpResponseBase]], Callable[..., HttpResponseBase]]:
    """Allow only users with one of these roles ("admin" also admits superusers)."""

    def decorator(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if not has_role(request.user, roles):
                raise PermissionDenied("Your role does not give access to this page.")
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def has_role(user: Any, roles: tuple[str, ...] | list[str]) -> bool:
    if not user.is_authenticated:
        return False
    return user.role in roles or ("admin" in roles and user.is_superuser)


class IsReviewer(BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return has_role(request.user, ("reviewer",))


class IsAdmin(BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return has_role(request.user, ("admin",))


class IsManagerOrAdmin(BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return has_role(request.user, ("manager", "admin"))


class ReadAnyWriteAdmin(BasePermission):
    """Catalog data: every signed-in role reads, only admins write."""

    def has_permission(self, request: Any, view: Any) -> bool:
        if not request.user.is_authenticated:
            return False
        return request.method in SAFE_METHODS or has_role(request.user, ("admin",))
