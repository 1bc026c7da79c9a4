"""The staged screening form for one idea.

One view, one template, one partial: a change to any level posts the form with htmx and gets back
the `#stages` partial, so stages open and close without a reload. Without JavaScript the same
form posts with a "Continue" button and the whole page comes back with the next stage open. The
server decides what is open from the posted values either way; rating_submit enforces the gates.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.catalog.models import Idea
from apps.core.errors import ApplicationError
from apps.screening.forms import DeclineForm, ScreeningForm
from apps.screening.models import Assignment, Dimension, Rating, RatingHistory
from apps.screening.selectors import dimensions_for_idea, ratings_of
from apps.screening.selectors.queue import (
    decline_undo_blocker,
    next_pending_idea_for,
    rating_history_of,
)
from apps.screening.services.ratings import (
    rating_decline,
    rating_decline_undo,
    rating_submit,
)

# Sent by static/js/save-retry.js with every save it makes.
SAVE_RETRY_HEADER = "X-Save-Retry"


def _get_idea_for_reviewer(
    request: AuthenticatedHttpRequest, idea_id: int
) -> tuple[Idea, Assignment]:
    """The idea and the signed-in reviewer's assignment; 404 when the idea is not theirs.

    404 rather than 403: a reviewer must not even learn which ideas exist outside their queue.
    """
    assignment = (
        Assignment.objects.select_related("idea__patent__domain")
        .filter(reviewer=request.user, idea_id=idea_id)
        .first()
    )
    if assignment is None:
        raise Http404("This idea is not in your queue.")
    return assignment.idea, assignment


def _shown(status: str, score: int | None) -> str:
    if not status:
        return "—"
    if status == Rating.Status.SCORED:
        return str(score)
    return str(Rating.Status(status).label).lower()


def _history_rows(history: list[RatingHistory]) -> list[dict[str, Any]]:
    return [
        {
            "when": h.changed_at,
            "dimension": h.rating.dimension.name,
            "old": _shown(h.old_status, h.old_score),
            "new": _shown(h.new_status, h.new_score),
            "rationale_changed": h.old_rationale != h.new_rationale and bool(h.old_status),
            "by": h.changed_by.display_name if h.changed_by else "system",
            "source": h.get_source_display(),
        }
        for h in history
    ]


def _render_page(
    request: AuthenticatedHttpRequest,
    *,
    idea: Idea,
    assignment: Assignment,
    form: ScreeningForm,
    decline_form: DeclineForm | None = None,
    note: str = "",
    confirming: bool = False,
    status: int = 200,
) -> HttpResponse:
    context = {
        "idea": idea,
        "patent": idea.patent,
        "assignment": assignment,
        "form": form,
        "stages": form.stages(),
        "decline_form": decline_form or DeclineForm(),
        "history": _history_rows(rating_history_of(reviewer=request.user, idea=idea)),
        "note": note,
        "confirming": confirming,
        "undo_blocker": decline_undo_blocker(assignment)
        if assignment.status == Assignment.Status.DECLINED
        else "",
    }
    return render(request, "screening/idea_rate.html", context, status=status)


def _stages_partial(
    request: AuthenticatedHttpRequest, *, idea: Idea, assignment: Assignment, form: ScreeningForm
) -> HttpResponse:
    """The `#stages` partial; when a "Please confirm" box was on the page (its signature came
    with the post), also remove it and turn "Save anyway" back into the usual button: the box
    spoke of answers the reviewer has just changed."""
    context = {
        "idea": idea,
        "assignment": assignment,
        "form": form,
        "stages": form.stages(),
        "withdraw_confirmation": bool(request.POST.get("confirm")),
    }
    return render(request, "screening/_stages_changed.html", context)


@role_required("reviewer")
def idea_rate(request: AuthenticatedHttpRequest, idea_id: int) -> HttpResponse:
    idea, assignment = _get_idea_for_reviewer(request, idea_id)
    dimensions: list[Dimension] = dimensions_for_idea(idea)
    saved = ratings_of(reviewer=request.user, idea=idea)
    if request.method != "POST":
        initial = ScreeningForm.initial_from(dimensions, saved)
        form = ScreeningForm(dimensions=dimensions, initial=initial, saved=saved)
        return _render_page(request, idea=idea, assignment=assignment, form=form)

    form = ScreeningForm(request.POST, dimensions=dimensions, saved=saved)
    action = request.POST.get("action", "")
    if action != "submit":
        # A level changed (htmx) or "Continue" was pressed (no JavaScript): show what is open now.
        if request.htmx:
            return _stages_partial(request, idea=idea, assignment=assignment, form=form)
        note = "Every open stage is filled in: submit your rating." if form.is_complete() else ""
        return _render_page(request, idea=idea, assignment=assignment, form=form, note=note)

    if form.is_valid() and form.needs_confirmation():
        # Closing stages or contradicting answers: say so and ask once before anything is saved.
        return _render_page(request, idea=idea, assignment=assignment, form=form, confirming=True)
    if form.is_valid():
        scores, answers, rationales = form.payload()
        was_pending = assignment.status == Assignment.Status.PENDING
        try:
            rating_submit(
                reviewer=request.user,
                idea=idea,
                scores=scores,
                answers=answers,
                rationales=rationales,
                source=Rating.Source.FORM,
            )
        except ApplicationError as exc:
            form.add_service_errors(exc.errors or [])
            if not exc.errors:
                form.dimension_errors.setdefault("", []).append(exc.message)
        else:
            return _after_submit(request, idea=idea, was_pending=was_pending)
    return _render_page(request, idea=idea, assignment=assignment, form=form, status=422)


def _after_submit(
    request: AuthenticatedHttpRequest, *, idea: Idea, was_pending: bool
) -> HttpResponse:
    """First ratings move on to the next pending idea; edits go back to the queue."""
    following = next_pending_idea_for(reviewer=request.user, after=idea) if was_pending else None
    if following is not None:
        messages.success(
            request, f"Saved your rating of “{idea.title}”. Next up: “{following.title}”."
        )
        return _go_to(request, reverse("screening:rate", kwargs={"idea_id": following.id}))
    messages.success(request, f"Saved your rating of “{idea.title}”.")
    return _go_to(request, reverse("screening:queue"))


def _go_to(request: AuthenticatedHttpRequest, url: str) -> HttpResponse:
    """The redirect after a save. A save sent by static/js/save-retry.js (fetch, so that an outage
    keeps the form and what was typed on the page) gets the address in a header and goes there
    itself: a fetch that followed a 302 would read the next page, and its "Saved" message, in
    the background, and the page the reviewer then sees would not say it."""
    if SAVE_RETRY_HEADER in request.headers:
        return HttpResponse(status=204, headers={"X-Save-Retry-Location": url})
    return redirect(url)


@role_required("reviewer")
@require_POST
def idea_decline(request: AuthenticatedHttpRequest, idea_id: int) -> HttpResponse:
    """Recuse from an idea whose patent the reviewer cannot judge; it leaves their queue."""
    idea, assignment = _get_idea_for_reviewer(request, idea_id)
    decline_form = DeclineForm(request.POST)
    if not decline_form.is_valid():
        dimensions = dimensions_for_idea(idea)
        initial = ScreeningForm.initial_from(
            dimensions, ratings_of(reviewer=request.user, idea=idea)
        )
        form = ScreeningForm(dimensions=dimensions, initial=initial)
        return _render_page(
            request,
            idea=idea,
            assignment=assignment,
            form=form,
            decline_form=decline_form,
            status=422,
        )
    try:
        rating_decline(reviewer=request.user, idea=idea, reason=decline_form.cleaned_data["reason"])
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect(reverse("screening:rate", kwargs={"idea_id": idea.id}))
    messages.success(
        request,
        f"You declined “{idea.title}”; it has left your queue. Changed your mind? Take it back "
        "under Declined below.",
    )
    return redirect("screening:queue")


@role_required("reviewer")
@require_POST
def idea_decline_undo(request: AuthenticatedHttpRequest, idea_id: int) -> HttpResponse:
    """Take a decline back while nobody has acted on it; the idea returns to the queue."""
    idea, _assignment = _get_idea_for_reviewer(request, idea_id)
    try:
        assignment = rating_decline_undo(reviewer=request.user, idea=idea)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect("screening:queue")
    if assignment.status == Assignment.Status.COMPLETED:
        messages.success(
            request,
            f"You took back your decline of “{idea.title}”; your earlier rating is restored.",
        )
    else:
        messages.success(
            request, f"You took back your decline of “{idea.title}”; it is back in your queue."
        )
    return redirect("screening:rate", idea_id=idea.id)
