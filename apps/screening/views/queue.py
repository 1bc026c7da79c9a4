from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.accounts.permissions import role_required
from apps.screening.selectors.queue import decline_undo_blocker, idea_queue_for


@role_required("reviewer")
def queue(request: HttpRequest) -> HttpResponse:
    """The ideas assigned to the signed-in reviewer: to rate, rated, declined."""
    queue = idea_queue_for(reviewer=request.user)
    # Declines nobody has acted on yet can be taken back from the queue.
    undoable = {a.id for a in queue.declined if not decline_undo_blocker(a)}
    return render(request, "screening/queue.html", {"queue": queue, "undoable": undoable})
