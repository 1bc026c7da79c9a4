"""The admin's people page: invite accounts to choose a password, by e-mail or a copied link."""

from __future__ import annotations

from axes.helpers import get_client_ip_address
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordResetForm
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_POST

from apps.accounts.forms import AccountPasswordResetForm
from apps.accounts.models import User
from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.accounts.selectors import accounts_for_invitations
from apps.accounts.services import (
    ResetThrottled,
    invitation_link,
    invitation_send,
    password_reset_request,
)
from apps.core.errors import ApplicationError


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


class ThrottledPasswordResetView(auth_views.PasswordResetView):
    """Django's reset page; the mail leaves from a task and requests are throttled
    (services.password_reset_request)."""

    form_class = AccountPasswordResetForm

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        try:
            password_reset_request(
                email=form.cleaned_data["email"],
                client_ip=get_client_ip_address(self.request) or "unknown",
                domain=self.request.get_host(),
                use_https=self.request.is_secure(),
            )
        except ResetThrottled as exc:
            form.add_error(None, exc.message)
            response = self.render_to_response(self.get_context_data(form=form), status=429)
            response["Retry-After"] = str(exc.retry_after)
            return response
        return HttpResponseRedirect(self.get_success_url())


@login_required
def home(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Send each role to the page it works from."""
    user = request.user
    targets = {
        "reviewer": "screening:queue",
        "manager": "disagreement:overview",
        "admin": "catalog:admin_home",
    }
    role = "admin" if user.is_superuser else user.role
    try:
        return redirect(reverse(targets[role]))
    except NoReverseMatch:
        return redirect("/admin/")
