from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render

from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.screening.selectors.queue import decline_undo_blockers, idea_queue_for


@role_required("reviewer")
def queue(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The ideas assigned to the signed-in reviewer: to rate, rated, declined."""
    queue = idea_queue_for(reviewer=request.user)
    # Declines nobody has acted on yet can be taken back from the queue.
    blockers = decline_undo_blockers(queue.declined)
    undoable = {pk for pk, reason in blockers.items() if not reason}
    return render(request, "screening/queue.html", {"queue": queue, "undoable": undoable})
