from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.accounts.permissions import role_required
from apps.screening.selectors.queue import idea_queue_for


@role_required("reviewer")
def queue(request: HttpRequest) -> HttpResponse:
    """The ideas assigned to the signed-in reviewer: to rate, rated, declined."""
    return render(request, "screening/queue.html", {"queue": idea_queue_for(reviewer=request.user)})
