"""What a locked-out sign-in gets (django-axes' AXES_LOCKOUT_CALLABLE): the API's JSON error body
on /api/ (POST /api/auth/token/), the lockout page everywhere else (the login form)."""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: Any
) -> HttpResponse:
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    message = (
        f"Too many failed sign-ins for this account from your address. Try again in "
        f"{seconds // 60} minutes, or ask an admin to unlock the account."
    )
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message, "errors": []}, status=429)
    else:
        response = render(request, "registration/locked_out.html", {"message": message}, status=429)
    response["Retry-After"] = str(seconds)
    return response


class TestClientLockoutBackend(AxesStandaloneBackend):
    """The lockout check for test settings only: Django's test `Client.login()` authenticates
    without a request, which django-axes refuses outright; such calls skip the check (they are
    not sign-ins over HTTP). Every HTTP sign-in is still checked, so lockout tests stay real.
    Production keeps axes' own backend, which refuses request-less calls as a misconfiguration.
    """

    def authenticate(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, *args, **kwargs)
