"""Recompute on demand and the polled progress of a snapshot."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.requests import AuthenticatedHttpRequest
from apps.core.errors import ApplicationError
from apps.disagreement.forms import RecomputeForm
from apps.disagreement.models import Level, MetricSnapshot
from apps.disagreement.services import metrics_request_recompute
from apps.disagreement.views.dashboard import managers_only


@managers_only
@require_POST
def recompute(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = RecomputeForm(request.POST)
    form.is_valid()
    data = form.cleaned_data
    back = reverse("disagreement:overview") + (
        f"?{request.POST.get('next_query')}" if request.POST.get("next_query") else ""
    )
    try:
        snapshot = metrics_request_recompute(
            actor=request.user,
            level=data.get("level") or Level.ORDINAL,
            since=data.get("since"),
            until=data.get("until"),
            include_categories=data.get("categories") == "include",
        )
    except ApplicationError as exc:
        if request.htmx:
            return render(
                request, "disagreement/_progress.html", {"error": exc.message}, status=503
            )
        messages.error(request, exc.message)
        return redirect(back)
    if request.htmx:
        return render(request, "disagreement/_progress.html", {"snapshot": snapshot})
    messages.success(request, "Recompute queued; this page shows the result when it is done.")
    return redirect(back)


@managers_only
@require_GET
def snapshot_progress(request: AuthenticatedHttpRequest, snapshot_id: int) -> HttpResponse:
    snapshot = get_object_or_404(MetricSnapshot.objects.defer("result"), id=snapshot_id)
    response = render(request, "disagreement/_progress.html", {"snapshot": snapshot})
    if request.htmx and snapshot.status == MetricSnapshot.Status.DONE:
        # The polling stops here; reload the page so the new numbers replace the old ones.
        response["HX-Refresh"] = "true"
    return response
