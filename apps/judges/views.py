"""Judge pages: alignment dashboard, runs and studies, cases, predictions, "my judge".

Thin: each view checks access, validates its input with a form, and renders what a presenter
gathers from the stored alignment snapshots (nothing here computes alignment).
"""

from __future__ import annotations

from typing import Any, TypedDict
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.models import User
from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.catalog.models import Domain, Idea
from apps.core import untrusted
from apps.core.csv_export import csv_response
from apps.core.errors import ApplicationError
from apps.core.pagination import BIGINT_MAX
from apps.judges import presenters, selectors, services
from apps.judges.forms import (
    AlignmentFilterForm,
    PredictionFilterForm,
    RunFilterForm,
    StudyForm,
)
from apps.judges.models import LOCAL_LABEL, JudgeRun
from apps.judges.services.alignment import alignment_request_recompute

managers_only = role_required("manager", "admin")


@managers_only
@require_GET
def alignment(request: AuthenticatedHttpRequest) -> HttpResponse:
    domain, source = AlignmentFilterForm(request.GET).choice()
    context = presenters.alignment_page(user=request.user, domain=domain, source=source)
    return render(request, "judges/alignment.html", {**context, "query": request.GET.urlencode()})


@managers_only
@require_GET
def alignment_csv(request: AuthenticatedHttpRequest, table: str) -> HttpResponseBase:
    if table == "shortlists":
        # The stored shortlists (not an alignment table): every reviewer, or one domain.
        domain = AlignmentFilterForm(request.GET).choice()[0]
        entries = presenters.shortlist_rows(reviewer=None, domain=domain, dimension=None)
        return csv_response(
            "judge-shortlists.csv",
            presenters.SHORTLIST_CSV_HEADER,
            presenters.shortlist_csv_rows(entries),
        )
    if table not in presenters.CSV_TABLES:
        raise Http404("Unknown table")
    domain, source = AlignmentFilterForm(request.GET).choice()
    scope = presenters.scope_for_source(source=source, domain_key=domain.key if domain else None)
    filename, header, rows = presenters.alignment_csv(table=table, scope=scope)
    return csv_response(filename, header, rows)


@require_POST
@managers_only
def alignment_recompute(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Queue a fresh snapshot of the scope (after an upgrade, or when the last one failed)."""
    domain, source = AlignmentFilterForm(request.POST).choice()
    scope = presenters.scope_for_source(source=source, domain_key=domain.key if domain else None)
    try:
        alignment_request_recompute(actor=request.user, scope=scope)
    except ApplicationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "The alignment is being computed; this page updates by itself.")
    query = f"?domain={domain.key if domain else ''}&source={source}"
    return redirect(reverse("judges:alignment") + query)


@managers_only
@require_GET
def alignment_status(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The polled "being computed" banner; it stops polling once the snapshot is stored."""
    domain, source = AlignmentFilterForm(request.GET).choice()
    scope = presenters.scope_for_source(source=source, domain_key=domain.key if domain else None)
    state = presenters.snapshot_state(scope)
    query = request.GET.copy()
    query.pop("waiting", None)
    context = {"state": state, "query": query.urlencode(), "domain": domain, "source": source}
    response = render(request, "judges/_alignment_status.html", context)
    if request.htmx and request.GET.get("waiting") and not state.pending:
        # The computation finished: reload so the new numbers replace the old ones.
        response["HX-Refresh"] = "true"
    return response


# --------------------------------------------------------------------------- runs


@managers_only
def runs(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = StudyForm(request.POST) if request.method == "POST" else None
    if form is not None and not request.user.is_admin:
        raise PermissionDenied("Only admins start judge studies.")
    if form is not None and form.is_valid():
        data = form.cleaned_data
        try:
            run, created = services.judge_study_start(
                by=request.user,
                domain=data["domain"],
                dimensions=data["dimensions"],
                configs=list(data["configs"]),
                shots=data["shots"],
                seeds=data["seeds"],
                backend=data["backend"],
                min_history=data["min_history"],
            )
        except ApplicationError as exc:
            form.add_error(None, str(exc))
        else:
            if created:
                # Not a flash message: the runs list shows the study's banner and keeps it
                # current (queued, running, done) while it polls.
                return redirect(f"{reverse('judges:runs')}?study={run.id}")
            else:
                messages.warning(
                    request,
                    f"The same study (#{run.id}) is already {run.status}; not started twice.",
                )
            return redirect("judges:runs")
    if form is None and request.user.is_admin:
        form = StudyForm()
    context = {
        **_filtered_runs(request),
        "form": form,
        "local_label": LOCAL_LABEL,
        "skipped_configs": presenters.skipped_configs(),
    }
    return render(request, "judges/runs.html", context)


def _filtered_runs(request: AuthenticatedHttpRequest, *, limit: int = 30) -> dict[str, Any]:
    """The runs list under the GET filters; unknown values are named and ignored."""
    filters = RunFilterForm(request.GET)
    valid = filters.is_valid()
    data = filters.cleaned_data if valid else {}
    context = presenters.runs_context(
        user=request.user,
        limit=limit,
        origin=data.get("origin", ""),
        status=data.get("status", ""),
    )
    study_id = request.GET.get("study", "")
    study_number = untrusted.parse_int(study_id, low=1, high=BIGINT_MAX)
    study = selectors.study_run(run_id=study_number) if study_number is not None else None
    if study is not None:
        context["filter_query"] = urlencode({**context["filters"], "study": study.id})
        context["any_active"] = context["any_active"] or study.is_active
    return {**context, "run_filters": filters, "study": study}


@managers_only
@require_GET
def runs_table(request: AuthenticatedHttpRequest) -> HttpResponse:
    compact = bool(request.GET.get("compact"))
    context = _filtered_runs(request, limit=8 if compact else 30)
    return render(request, "judges/_runs.html", {**context, "compact": compact})


@require_POST
@role_required("admin")
def run_cancel(request: AuthenticatedHttpRequest, run_id: int) -> HttpResponse:
    try:
        run = services.judge_run_cancel(run=services.judge_run_get(run_id=run_id), by=request.user)
    except ApplicationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Run #{run.id} cancelled.")
    if request.htmx:
        return render(request, "judges/_runs.html", presenters.runs_context(user=request.user))
    return redirect(request.POST.get("next") or reverse("judges:runs"))


def _get_run(run_id: int) -> JudgeRun:
    run = JudgeRun.objects.select_related("domain", "reviewer", "requested_by").filter(id=run_id)
    found = run.first()
    if found is None:
        raise Http404("No such run")
    return found


@managers_only
@require_GET
def run_detail(request: AuthenticatedHttpRequest, run_id: int) -> HttpResponse:
    context = presenters.run_page(run=_get_run(run_id), user=request.user)
    return render(request, "judges/run_detail.html", context)


@managers_only
@require_GET
def run_status(request: AuthenticatedHttpRequest, run_id: int) -> HttpResponse:
    """The run page's polled partial (#run-status); it renders without the trigger when done."""
    context = presenters.run_page(run=_get_run(run_id), user=request.user)
    return render(request, "judges/_run_status.html", context)


# --------------------------------------------------------------------------- case, predictions


@managers_only
@require_GET
def case(request: AuthenticatedHttpRequest, idea_id: int) -> HttpResponse:
    idea = Idea.objects.select_related("patent", "patent__domain").filter(id=idea_id).first()
    if idea is None:
        raise Http404("No such idea")
    return render(request, "judges/case.html", presenters.case_page(idea=idea))


class PredictionFilters(TypedDict):
    """The predictions page's filters, as presenters.prediction_rows takes them."""

    reviewer: User | None
    domain: Domain | None
    dimension: str | None


@managers_only
@require_GET
def predictions(request: AuthenticatedHttpRequest) -> HttpResponseBase:
    reviewers = [
        (u.username, u.display_name)
        for u in User.objects.filter(role=User.Role.REVIEWER).order_by("username")
    ]
    form = PredictionFilterForm(request.GET or None, reviewers=reviewers)
    data = form.cleaned_data if form.is_valid() else {}
    reviewer = User.objects.filter(username=data.get("reviewer") or None).first()
    filters: PredictionFilters = {
        "reviewer": reviewer,
        "domain": data.get("domain"),
        "dimension": data.get("dimension") or None,
    }
    if request.GET.get("format") == "csv":
        rows = presenters.prediction_rows(**filters)
        header = presenters.PREDICTION_CSV_HEADER
        return csv_response("judge-predictions.csv", header, presenters.prediction_csv_rows(rows))
    context = presenters.predictions_page(form=form, **filters)
    return render(request, "judges/predictions.html", {**context, "query": request.GET.urlencode()})


# --------------------------------------------------------------------------- reviewer's own page


@role_required("reviewer")
@require_GET
def me(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The reviewer's own judge only: nothing here is computed from other reviewers' judges."""
    return render(request, "judges/me.html", presenters.my_judge_page(user=request.user))
