from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import NoReverseMatch, reverse
from django.views import defaults

from apps.core.requests import AuthenticatedHttpRequest


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


def healthz(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"status": "ok"})


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: API clients get the API's error body (JSON), people get the 404 page."""
    if _is_api(request):
        return JsonResponse(
            {"detail": f"No API endpoint at {request.path}; see /api/docs/.", "errors": []},
            status=404,
        )
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the same split, so an API client never has to parse an HTML error page."""
    if _is_api(request):
        return JsonResponse({"detail": "Server error.", "errors": []}, status=500)
    return defaults.server_error(request)
