"""Panel pages: personas and runs of a domain, a run's study, and the idea-page fragment.

Managers read; admins upload documents, build personas and start runs (personas are edited in
the Django admin). Everything shown is read from stored rows; runs are computed by workers."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.catalog.models import Domain
from apps.core.errors import ApplicationError
from apps.panels import presenters
from apps.panels.forms import BuildForm, DocumentForm, DomainForm, RunForm
from apps.panels.models import PanelRun
from apps.panels.selectors import panel_scores_for_ideas
from apps.panels.services import dispatch, panel_backend, persona_document_add
from apps.panels.services.runs import panel_run_plan, panel_run_start

managers_only = role_required("manager", "admin")
admins_only = role_required("admin")


def _home_url(domain: Domain | None) -> str:
    return reverse("panels:home") + (f"?domain={domain.key}" if domain else "")


def _error_text(exc: ApplicationError) -> str:
    return " ".join([exc.message, *(str(e) for e in exc.errors)])


def idea_panel_context(*, idea: Any, viewer: Any) -> dict[str, Any]:
    """The context of templates/panels/_idea_panel.html (an IDEA_PAGE_SECTIONS section): the
    latest panel's LLM scores of the idea, shown apart from the people's."""
    return {"panel_scores": panel_scores_for_ideas(idea_ids=[idea.id]).get(idea.id, [])}


@managers_only
@require_GET
def home(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = DomainForm(request.GET)
    domain = form.cleaned_data.get("domain") if form.is_valid() else None
    domain = domain or Domain.objects.order_by("name").first()
    context = presenters.home_page(domain=domain)
    return render(
        request,
        "panels/home.html",
        {**context, "run_form": RunForm(initial={"domain": domain.key if domain else ""})},
    )


@admins_only
@require_POST
def document_upload(request: AuthenticatedHttpRequest) -> HttpResponseBase:
    form = DocumentForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, "The document was not added: " + form.errors.as_text())
        return redirect(_home_url(None))
    domain = form.cleaned_data["domain"]
    try:
        persona_document_add(
            domain=domain,
            title=form.cleaned_data["title"],
            text=form.cleaned_data["text"],
            by=request.user,
        )
    except ApplicationError as exc:
        messages.error(request, _error_text(exc))
    else:
        messages.success(request, "Document stored; the model is reading it for stakeholders.")
    return redirect(_home_url(domain))


@admins_only
@require_POST
def personas_build(request: AuthenticatedHttpRequest) -> HttpResponseBase:
    form = BuildForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing was built: " + form.errors.as_text())
        return redirect(_home_url(None))
    domain = form.cleaned_data["domain"]
    try:
        panel_backend()
    except ApplicationError as exc:
        messages.error(request, _error_text(exc))
    else:
        dispatch.send_personas_build(
            domain.id, form.cleaned_data["source"], form.cleaned_data["count"]
        )
        messages.success(request, "The personas are being drafted; reload this page in a minute.")
    return redirect(_home_url(domain))


@admins_only
@require_POST
def run_start(request: AuthenticatedHttpRequest) -> HttpResponseBase:
    """First post: show the cost estimate; the confirmed post starts the run."""
    form = RunForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The panel was not started: " + form.errors.as_text())
        return redirect(_home_url(None))
    data = form.cleaned_data
    try:
        plan = panel_run_plan(
            domain=data["domain"],
            source=data["personas"],
            dimension_key=data["dimension"] or None,
            idea_count=data["ideas"],
            max_rounds=data["rounds"],
        )
        if not data["confirm"]:
            panel_backend()
            confirm = RunForm(initial={**request.POST.dict(), "confirm": True})
            return render(
                request,
                "panels/run_confirm.html",
                {
                    "plan": plan,
                    "form": confirm,
                    "budget": data["budget_tokens"] or plan.estimate["tokens"],
                },
            )
        run = panel_run_start(plan=plan, by=request.user, budget_tokens=data["budget_tokens"])
    except ApplicationError as exc:
        messages.error(request, _error_text(exc))
        return redirect(_home_url(data["domain"]))
    messages.success(request, f"Panel run #{run.id} is queued.")
    return redirect("panels:run_detail", run_id=run.id)


@managers_only
@require_GET
def run_detail(request: AuthenticatedHttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(PanelRun.objects.select_related("domain", "requested_by"), id=run_id)
    return render(request, "panels/run_detail.html", presenters.run_page(run))


@managers_only
@require_GET
def run_status(request: AuthenticatedHttpRequest, run_id: int) -> HttpResponse:
    """The polled status fragment; once the run has ended the page reloads with its figures."""
    run = get_object_or_404(PanelRun.objects.select_related("domain"), id=run_id)
    response = render(request, "panels/_run_status.html", presenters.run_page(run))
    if request.htmx and not run.is_active:
        response["HX-Refresh"] = "true"
    return response
