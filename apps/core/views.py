from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import NoReverseMatch, reverse


@login_required
def home(request: HttpRequest) -> HttpResponse:
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
