"""Decide (the ranking a manager acts on), its CSV, and the routing of the next reads."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseBadRequest, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.catalog.models import Domain, Idea
from apps.core import untrusted
from apps.core.csv_export import csv_response
from apps.core.errors import ApplicationError
from apps.core.gc_freeze import without_cycle_collection
from apps.core.pagination import BIGINT_MAX
from apps.decisions import presenters as P
from apps.decisions import selectors
from apps.decisions.flags import extra_flags
from apps.decisions.forms import AcceptForm, DecideForm, DomainRoutingForm
from apps.decisions.models import DecisionSnapshot
from apps.decisions.ranking.cut import just_below
from apps.decisions.ranking.model import ALL
from apps.decisions.record import selectors as record_selectors
from apps.decisions.record.forms import CutForm
from apps.decisions.record.services import SIZE_MAX
from apps.decisions.services import (
    POLICY,
    decisions_request_recompute,
    domain_routing_set,
    suggestions_accept,
)
from apps.screening.selectors import frame as ratings

managers_only = role_required("manager", "admin")
admins_only = role_required("admin")


def _board(request: AuthenticatedHttpRequest) -> dict[str, Any]:
    """The snapshot's ranking for the chosen domain and dimension, searched and ordered (its
    rows without their flags: ``_flagged`` adds them to the rows shown).

    The domain control lists the domains the snapshot ranked (there is no "all domains": each
    domain is its own shortlist), and shows the one the table shows.
    """
    form = DecideForm(request.GET)
    snapshot = selectors.snapshot_latest()
    labels = ratings.dimension_labels()
    names = dict(Domain.objects.values_list("key", "name"))
    domains = selectors.snapshot_domains(snapshot) if snapshot else []
    domain = form.value("domain")
    domain = domain if domain in domains else (domains[0] if domains else None)
    dims = (snapshot.result or {}).get("dimensions", []) if snapshot else []
    dimension = form.value("dimension", ALL)
    dimension = dimension if dimension in dims else ALL
    sort, query = form.order, form.value("q", "")
    evidence = form.value("evidence", P.DEFAULT_EVIDENCE)
    rows: list[dict[str, Any]] = []
    cut: list[dict[str, Any]] = []
    total = 0
    # The cut at N (ranking/cut.py): ?n= asks for another N than the domain's stored one.
    n_asked = CutForm(request.GET).value()
    n = n_asked or (record_selectors.shortlist_size(domain=domain) if domain else 0)
    if snapshot and domain:
        stored = selectors.snapshot_rows(
            snapshot, domain=domain, dimension=dimension, evidence=evidence
        )
        total = len(stored)
        cut = record_selectors.cut_rows(stored, sort=sort, n=n)
        # cut_rows ordered and ranked the rows already; a search keeps the matches, ranked.
        rows = P.sort_rows(cut, sort=sort, query=query) if query.strip() else cut
    result = (snapshot.result or {}) if snapshot else {}
    return {
        "form": form,
        "snapshot": snapshot,
        "domain": domain,
        "domain_name": names.get(domain or "", domain or ""),
        "domains": [(d, names.get(d, d)) for d in domains],
        "dimension": dimension,
        "dimensions": [(ALL, "All dimensions (overall)")] + [(d, labels.get(d, d)) for d in dims],
        "dimension_name": "all dimensions"
        if dimension == ALL
        else labels.get(dimension, dimension),
        "overall": dimension == ALL,
        "sort": sort,
        "query": query,
        "rows": rows,
        "total": total,
        "top_share": result.get("top_share", 0.1),
        "top_pct": f"{100 * result.get('top_share', 0.1):g}",
        # The filters the other tabs share: the domain, and the dimension when one is chosen.
        "tabs_query": urlencode(
            {k: v for k, v in (("domain", domain), ("dimension", dimension)) if v and v != ALL}
        ),
        "evidence": evidence,
        "evidences": P.EVIDENCE,
        "people_only": evidence == "people",
        "dark": P.dark_summary(result, domain=domain or "", evidence=evidence, labels=labels),
        "query_string": urlencode(
            {
                "domain": domain or "",
                "dimension": dimension,
                "sort": sort,
                "q": query,
                **({"n": n_asked} if n_asked else {}),
                **({"evidence": evidence} if evidence != P.DEFAULT_EVIDENCE else {}),
            }
        ),
        "n": n,
        "n_asked": n_asked,
        "cut": cut,
    }


def _flagged(board: dict[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` of the board with their flags: the model's and the other apps' (a query per
    app for the rows given, so the page asks for its page's rows only)."""
    ids = [r["idea_id"] for r in rows]
    extra = extra_flags(ids, domain=board["domain"], dimension=board["dimension"]) if ids else {}
    return P.with_flags(rows, extra)


def idea_standing_context(*, idea: Idea, viewer: Any = None) -> dict[str, Any]:
    """The context of templates/decisions/_idea_standing.html (an IDEA_PAGE_SECTIONS section):
    the idea's rank, interval, P(top) and predictions from the stored decision snapshot (the
    same for every manager: ``viewer`` is not read)."""
    snapshot = selectors.snapshot_latest()
    if snapshot is None:
        return {"standing_ready": False}
    domain = idea.patent.domain.key
    standing = P.idea_standing(
        selectors.snapshot_domain_slices(snapshot, domain=domain),
        idea_id=idea.id,
        labels=ratings.dimension_labels(),
        # P(top N) for the domain's shortlist size, as Decide shows it (ranking/cut.py).
        shortlist_n=record_selectors.shortlist_size(domain=domain),
    )
    result = snapshot.result or {}
    return {
        "standing_ready": True,
        "standing": standing,
        "standing_snapshot": snapshot,
        "standing_top_pct": f"{100 * result.get('top_share', 0.1):g}",
        "standing_decide_query": urlencode({"domain": domain, "q": idea.external_id}),
    }


@managers_only
@require_GET
@without_cycle_collection
def decide(request: AuthenticatedHttpRequest) -> HttpResponse:
    board = _board(request)
    rows = board["rows"]
    n_pages = max(1, -(-len(rows) // P.PAGE_SIZE))
    page = min(board["form"].value("page", 1), n_pages)
    start = (page - 1) * P.PAGE_SIZE
    snapshot = board["snapshot"]
    decided = (
        record_selectors.marks_current_by_idea(domain=board["domain"]) if board["domain"] else {}
    )
    categories = []
    if not board["overall"]:
        categories = ratings.rubric_categories().get(board["dimension"], [])
    return render(
        request,
        "decisions/decide.html",
        {
            **board,
            "shown": [
                {**r, "decision": decided.get(r["idea_id"])}
                for r in P.display(
                    _flagged(board, rows[start : start + P.PAGE_SIZE]), categories=categories
                )
            ],
            "page": page,
            "n_pages": n_pages,
            "sorts": [
                ("low", "Lower bound (default)"),
                ("estimate", "Estimate"),
                ("p_top", f"P(top {board['n']})"),
            ],
            "sort_label": P.SORTS[board["sort"]],
            "in_progress": selectors.snapshot_in_progress(),
            "failure": selectors.snapshot_last_failure(
                after=snapshot.created_at if snapshot else None
            ),
            "changed_since": selectors.ratings_changed_since(snapshot) if snapshot else 0,
            "prediction_work": selectors.prediction_work(snapshot),
            "tab": "decide",
            # The cut: how many ideas it holds, and the ideas just below it (what would change it).
            "n_in": sum(1 for r in board["cut"] if r["in_shortlist"]),
            "below": just_below(board["cut"], n=board["n"]),
            "n_stored": record_selectors.shortlist_size(domain=board["domain"])
            if board["domain"]
            else None,
        },
    )


@managers_only
@require_GET
@without_cycle_collection
def export_csv(request: AuthenticatedHttpRequest) -> HttpResponseBase:
    """The page's rows (every page of them) with the page's columns and order."""
    if request.GET.get("n") is not None and CutForm(request.GET).value() is None:
        return HttpResponseBadRequest(
            f"n: the shortlist size must be a whole number from 1 to {SIZE_MAX} "
            f"(got {request.GET.get('n', '')[:50]!r}).",
            content_type="text/plain; charset=utf-8",
        )
    board = _board(request)
    if board["snapshot"] is None:
        raise Http404("The ranking has not been computed yet.")
    header, rows = P.csv_rows(
        _flagged(board, board["rows"]), sort=board["sort"], evidence=board["evidence"]
    )
    dim = "all" if board["overall"] else board["dimension"]
    who = "-people" if board["people_only"] else ""
    return csv_response(
        f"pluralist-decide-{board['domain']}-{dim}{who}-{board['snapshot'].id}.csv", header, rows
    )


@managers_only
@require_POST
def recompute(request: AuthenticatedHttpRequest) -> HttpResponse:
    back = reverse("decisions:decide")
    try:
        snapshot = decisions_request_recompute(actor=request.user)
    except ApplicationError as exc:
        if request.htmx:
            return render(request, "decisions/_progress.html", {"error": exc.message}, status=503)
        messages.error(request, exc.message)
        return redirect(back)
    if request.htmx:
        return render(request, "decisions/_progress.html", {"snapshot": snapshot})
    messages.success(request, "Recompute queued; this page shows the result when it is done.")
    return redirect(back)


@managers_only
@require_GET
def snapshot_progress(request: AuthenticatedHttpRequest, snapshot_id: int) -> HttpResponse:
    snapshot = get_object_or_404(DecisionSnapshot.objects.defer("result"), id=snapshot_id)
    response = render(request, "decisions/_progress.html", {"snapshot": snapshot})
    if request.htmx and snapshot.status == DecisionSnapshot.Status.DONE:
        response["HX-Refresh"] = "true"
    return response


@managers_only
@require_GET
def routing(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The open suggestions by domain; admins accept them (the assignments page loads this)."""
    # Through the form: a hostile value (a NUL byte, 10 kB) falls back to every domain.
    domain = DecideForm(request.GET).value("domain")
    suggestions = list(selectors.open_suggestions(domain=domain)[:500])
    context = {
        "suggestions": suggestions,
        "settings": selectors.routing_settings(),
        "policy": POLICY,
        "domain": domain,
        "can_edit": request.user.is_admin,
        "snapshot": selectors.snapshot_latest(),
    }
    template = "decisions/_routing.html" if request.htmx else "decisions/routing.html"
    return render(request, template, context)


@admins_only
@require_POST
def routing_accept(request: AuthenticatedHttpRequest) -> HttpResponse:
    ids = request.POST.getlist("suggestions")
    ids = [i for i in ids if untrusted.parse_int(i, low=1, high=BIGINT_MAX) is not None]
    form = AcceptForm(request.POST, choices=[(i, i) for i in ids])
    back = reverse("decisions:routing")
    if not form.is_valid():
        messages.error(request, "Choose at least one suggestion to accept.")
        return redirect(back)
    try:
        n = suggestions_accept(actor=request.user, suggestion_ids=form.cleaned_data["suggestions"])
    except ApplicationError as exc:
        messages.error(request, exc.message)
        return redirect(back)
    skipped = len(form.cleaned_data["suggestions"]) - n
    note = (
        f" ({skipped} skipped: no longer open, or the reviewer's queue is full)" if skipped else ""
    )
    messages.success(request, f"{n} suggestion{'s' if n != 1 else ''} assigned{note}.")
    return redirect(back)


@admins_only
@require_POST
def routing_domain(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = DomainRoutingForm(request.POST)
    back = reverse("decisions:routing")
    if not form.is_valid():
        messages.error(request, "Name a domain and on or off.")
        return redirect(back)
    domain = Domain.objects.filter(key=form.cleaned_data["domain"]).first()
    if domain is None:
        messages.error(request, f"Unknown domain {form.cleaned_data['domain']!r}.")
        return redirect(back)
    domain_routing_set(actor=request.user, domain=domain, automatic=form.cleaned_data["automatic"])
    state = "on" if form.cleaned_data["automatic"] else "off"
    messages.success(request, f"Automatic routing for {domain.name} is {state}.")
    return redirect(back)
