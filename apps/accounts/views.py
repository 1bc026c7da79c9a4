"""The admin's people page: invite accounts to choose a password, by e-mail or a copied link."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.models import User
from apps.accounts.permissions import role_required
from apps.accounts.selectors import accounts_for_invitations
from apps.accounts.services import invitation_link, invitation_send
from apps.core.errors import ApplicationError
from apps.core.requests import AuthenticatedHttpRequest


def _render(
    request: AuthenticatedHttpRequest, *, link_for: User | None = None, link: str = ""
) -> HttpResponse:
    context = {
        "rows": accounts_for_invitations(),
        "link_for": link_for,
        "link": link,
        "link_days": max(1, settings.PASSWORD_RESET_TIMEOUT // 86400),
    }
    return render(request, "accounts/invitations.html", context)


@role_required("admin")
def invitations(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _render(request)


@role_required("admin")
@require_POST
def invitation_create(request: AuthenticatedHttpRequest, user_id: int) -> HttpResponse:
    """Send the invitation by e-mail, or (how=link) show the link for the admin to copy."""
    user = get_object_or_404(User, pk=user_id, is_active=True)
    base_url = request.build_absolute_uri("/")
    try:
        if request.POST.get("how") == "link":
            link = invitation_link(user=user, actor=request.user, base_url=base_url)
            return _render(request, link_for=user, link=link)
        invitation_send(user=user, actor=request.user, base_url=base_url)
    except ApplicationError as exc:
        messages.error(request, str(exc).replace("\n  ", " "))
        return redirect("invitations")
    messages.success(request, f"Invitation e-mailed to {user.display_name} <{user.email}>.")
    return redirect("invitations")
