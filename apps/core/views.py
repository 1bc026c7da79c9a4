import sys

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views import defaults

from apps.core import health
from apps.core.api import service_unavailable
from apps.core.errors import ServiceUnavailable


def healthz(request: HttpRequest) -> HttpResponse:
    """200 when the database and the broker both answer, else 503 naming what is down:
    {"status": "ok" | "unavailable", "down": [...], "checks": {"database": {"status": "ok",
    "ms": 0.4}, "broker": {"status": "down", "ms": 1.0, "error": "..."}}}.
    Never waits for a view's turn (apps/core/middleware.py); each check has a short timeout."""
    checks = health.check_all()
    down = [c.dependency for c in checks if not c.ok]
    body = {
        "status": "unavailable" if down else "ok",
        "down": down,
        "checks": {c.dependency: c.as_dict() for c in checks},
    }
    response = JsonResponse(body, status=503 if down else 200)
    response["Cache-Control"] = "no-store"
    return response


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
    """handler500: the same split, so an API client never has to parse an HTML error page.

    An unreachable database or broker (apps/core/health.py) is a 503 instead, naming it: the
    API's error body, or the outage page, which reloads itself after a GET (a POST's form stays
    in the browser's history: Back returns to it). Called while Django handles the exception,
    so sys.exc_info() holds it. Nothing here touches the database.
    """
    unavailable = service_unavailable(sys.exc_info()[1])
    if unavailable is not None:
        return _unavailable_response(request, unavailable)
    if _is_api(request):
        return JsonResponse({"detail": "Server error.", "errors": []}, status=500)
    return defaults.server_error(request)


def _unavailable_response(request: HttpRequest, error: ServiceUnavailable) -> HttpResponse:
    dependency = error.errors[0].field if error.errors else "database"
    if _is_api(request):
        response: HttpResponse = JsonResponse(error.as_dict(), status=503)
    else:
        # Rendered without the request: the context processors would read the session and the
        # user, which live in the database that may be the one missing.
        html = render_to_string(
            "503.html",
            {
                "what": health.LABELS.get(dependency, dependency),
                "dependency": dependency,
                "retry_seconds": health.RETRY_AFTER_SECONDS * 2,
                "reload": request.method in ("GET", "HEAD"),
                "path": request.get_full_path(),
            },
        )
        response = HttpResponse(html, status=503)
    response["Retry-After"] = str(health.RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    # For scripts that keep a form on the page and retry (static/js/save-retry.js).
    response["X-Unavailable"] = dependency
    return response
