"""Admin page for assignments: assign by hand, assign a domain in bulk (balanced), see the load.

Every form is a real POST form; with htmx the answer is the page's main panel only, otherwise the
browser is redirected back to the page (post/redirect/get) and the message shows there.
"""

from __future__ import annotations

import re
from typing import Any, cast

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.models import User
from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.catalog.models import Domain, Idea
from apps.core.errors import ApplicationError
from apps.screening.models import Assignment
from apps.screening.selectors.assignments import assignable_reviewers, assignment_list, domain_load
from apps.screening.services.assignments import (
    assignment_bulk_balanced,
    assignment_delete,
    assignments_create,
)

RECENT = 15


class ReviewerChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: User) -> str:
        domains = (
            ", ".join(d.name for d in obj.reviewer_profile.domains.all())
            if hasattr(obj, "reviewer_profile")
            else ""
        )
        return f"{obj.display_name} ({obj.username}) · {domains or 'no domain'}"


class HandAssignForm(forms.Form):
    reviewer = ReviewerChoiceField(queryset=User.objects.none(), empty_label="Choose a reviewer…")
    ideas = forms.CharField(
        label="Idea IDs",
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One idea, or several separated by commas, spaces or new lines.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["reviewer"]).queryset = assignable_reviewers()
        # The hint shows real IDs, exactly as stored: IDs are case-sensitive.
        examples = list(Idea.objects.order_by("pk").values_list("external_id", flat=True)[:2])
        ideas = self.fields["ideas"]
        if examples:
            ideas.widget.attrs["placeholder"] = ", ".join(examples)
            ideas.help_text = (
                f"One idea, or several separated by commas, spaces or new lines, written exactly "
                f"as imported (IDs are case-sensitive), e.g. {examples[0]}."
            )
        else:
            ideas.help_text = "No ideas yet: import some on the Data & imports page first."

    def clean_ideas(self) -> list[Idea]:
        wanted = [token for token in re.split(r"[\s,;]+", self.cleaned_data["ideas"]) if token]
        if not wanted:
            raise forms.ValidationError("Name at least one idea.")
        if len(wanted) > 1000:
            raise forms.ValidationError(
                "At most 1,000 ideas at once; use the balanced assignment for more."
            )
        found = {
            i.external_id: i
            for i in Idea.objects.select_related("patent__domain").filter(external_id__in=wanted)
        }
        unknown = [w for w in wanted if w not in found]
        if unknown:
            shown = ", ".join(unknown[:10]) + (" …" if len(unknown) > 10 else "")
            message = f"No idea with the ID {shown}."
            # The commonest slip: the right ID in the wrong case.
            cased = {
                w: Idea.objects.filter(external_id__iexact=w)
                .values_list("external_id", flat=True)
                .first()
                for w in unknown[:10]
            }
            hints = [f"{w} → {real}" for w, real in cased.items() if real]
            if hints:
                message += f" IDs are case-sensitive; did you mean {', '.join(hints)}?"
            raise forms.ValidationError(message)
        return list({w: found[w] for w in wanted}.values())


class BulkAssignForm(forms.Form):
    domain = forms.ModelChoiceField(
        queryset=Domain.objects.order_by("name"), empty_label="Choose a domain…"
    )
    per_idea = forms.IntegerField(
        label="Reviewers per idea",
        min_value=1,
        max_value=50,
        initial=3,
        widget=forms.NumberInput(attrs={"style": "width: 6rem"}),
    )


def _context(
    request: AuthenticatedHttpRequest,
    *,
    hand_form: HandAssignForm | None = None,
    bulk_form: BulkAssignForm | None = None,
) -> dict[str, Any]:
    return {
        "hand_form": hand_form or HandAssignForm(),
        "bulk_form": bulk_form or BulkAssignForm(),
        "domains": domain_load(),
        "recent": list(assignment_list()[:RECENT]),
    }


def _answer(
    request: AuthenticatedHttpRequest,
    context: dict[str, Any] | None = None,
    *,
    failed: bool = False,
) -> HttpResponse:
    """htmx gets the panel; a plain browser gets a redirect (or the page with errors, as 400)."""
    if request.htmx:
        return render(request, "screening/_assignments_panel.html", context or _context(request))
    if failed:
        return render(
            request, "screening/assignments.html", context or _context(request), status=400
        )
    return redirect("assignments:index")


@require_GET
@role_required("admin")
def index(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(request, "screening/assignments.html", _context(request))


@require_POST
@role_required("admin")
def assign(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = HandAssignForm(request.POST)
    if form.is_valid():
        reviewer = form.cleaned_data["reviewer"]
        ideas = form.cleaned_data["ideas"]
        before = Assignment.objects.filter(reviewer=reviewer).count()
        try:
            assignments_create(reviewer=reviewer, ideas=ideas, actor=request.user)
        except ApplicationError as exc:
            for error in exc.errors:
                form.add_error(
                    "ideas" if error.field == "ideas" else "reviewer",
                    f"{error.value}: {error.message}" if error.field == "ideas" else error.message,
                )
            if not exc.errors:
                form.add_error(None, exc.message)
        else:
            created = Assignment.objects.filter(reviewer=reviewer).count() - before
            already = len(ideas) - created
            text = (
                f"Assigned {created} idea{'s' if created != 1 else ''} to {reviewer.display_name}."
            )
            if already:
                text += f" {already} {'was' if already == 1 else 'were'} already assigned."
            messages.success(request, text)
            return _answer(request)
    messages.error(request, "Nothing was assigned; see the errors in the form.")
    return _answer(request, _context(request, hand_form=form), failed=True)


@require_POST
@role_required("admin")
def bulk(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = BulkAssignForm(request.POST)
    if form.is_valid():
        domain = form.cleaned_data["domain"]
        per_idea = form.cleaned_data["per_idea"]
        try:
            created = assignment_bulk_balanced(domain=domain, per_idea=per_idea, actor=request.user)
        except ApplicationError as exc:
            for error in exc.errors:
                form.add_error(error.field if error.field in form.fields else None, error.message)
            if not exc.errors:
                form.add_error(None, exc.message)
        else:
            if created:
                messages.success(
                    request,
                    f"Created {created} assignment{'s' if created != 1 else ''} in {domain.name}: "
                    f"every idea now has {per_idea} reviewer{'s' if per_idea != 1 else ''}, "
                    "spread evenly.",
                )
            else:
                messages.info(
                    request,
                    f"Nothing to do: every idea of {domain.name} already has {per_idea} reviewer"
                    f"{'s' if per_idea != 1 else ''}.",
                )
            return _answer(request)
    messages.error(request, "Nothing was assigned; see the errors in the form.")
    return _answer(request, _context(request, bulk_form=form), failed=True)


@require_POST
@role_required("admin")
def delete(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    assignment = assignment_list().filter(pk=pk).first()
    if assignment is None:
        messages.info(request, "That assignment was already removed.")
        return _answer(request)
    try:
        assignment_delete(assignment=assignment, actor=request.user)
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return _answer(request, failed=False)
    messages.success(
        request,
        f"Removed {assignment.idea.external_id} from {assignment.reviewer.display_name}'s queue.",
    )
    return _answer(request)
