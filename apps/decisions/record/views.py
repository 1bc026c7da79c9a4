"""The decision page of a domain (marks, their history, the CSV, the memo) and the shortlist size.

Managers and admins only (reviewers get 403). Every form is a real POST form; htmx swaps one
row (``#mark-<idea id>``) or the history (``#history-<idea id>``) when JavaScript runs.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.catalog.models import Domain, Idea
from apps.core.csv_export import csv_response
from apps.core.errors import ApplicationError
from apps.core.gc_freeze import without_cycle_collection
from apps.core.pagination import BIGINT_MAX
from apps.decisions.models import DecisionMark
from apps.decisions.record import selectors
from apps.decisions.record.forms import MarkForm, MarksPageForm, MemoForm, ShortlistSizeForm
from apps.decisions.record.memo import decision_memo
from apps.decisions.record.services import decision_mark_record, shortlist_size_set

managers_only = role_required("manager", "admin")
PAGE_SIZE = 25
# What the CSV of the marks holds (one home: the page's download and docs/formats.md).
MARKS_CSV_HEADER = [
    "idea",
    "idea_id",
    "title",
    "domain",
    "version",
    "mark",
    "note",
    "decided_by",
    "decided_at",
    "snapshot",
    "snapshot_computed_at",
    "rank",
    "estimate",
    "low",
    "high",
    "shortlist_size",
    "p_top_n",
    "in_shortlist",
]


def _domains() -> list[Domain]:
    return list(Domain.objects.order_by("key"))  # the first is Decide's default too


def _domain(key: str | None) -> Domain | None:
    found = selectors.domain_of(key or "")
    if found is not None:
        return found
    domains = _domains()
    return domains[0] if domains else None


def _idea(idea_id: int) -> Idea:
    idea = (
        Idea.objects.select_related("patent__domain").filter(pk=idea_id).first()
        if idea_id <= BIGINT_MAX
        else None
    )
    if idea is None:
        raise Http404("No such idea.")
    return idea


def _row_context(
    row: dict[str, Any] | None, idea: Idea, mark: DecisionMark | None, page: int
) -> dict[str, Any]:
    return {
        "r": row or {"idea_id": idea.pk, "idea": idea.external_id, "title": idea.display_title},
        "m": mark,
        "page": page,
        "marks": DecisionMark.Mark.choices,
    }


@managers_only
@require_GET
@without_cycle_collection
def marks_page(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = MarksPageForm(request.GET)
    domain = _domain(form.value("domain"))
    show = form.value("show", "all")
    board = selectors.domain_board(domain=domain.key) if domain else None
    current = selectors.marks_current_by_idea(domain=domain.key) if domain else {}
    rows = list(board.rows) if board else []
    if show == "marked":
        rows = [r for r in rows if r["idea_id"] in current]
    elif show == "shortlist":
        rows = [r for r in rows if r["in_shortlist"]]
    n_pages = max(1, -(-len(rows) // PAGE_SIZE))
    page = min(form.value("page", 1), n_pages)
    shown = rows[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    counts = {value: 0 for value in DecisionMark.Mark.values}
    for m in current.values():
        counts[m.mark] += 1
    on_board = {r["idea_id"] for r in board.rows} if board else set()
    return render(
        request,
        "decisions/marks.html",
        {
            "domains": _domains(),
            "domain": domain,
            "board": board,
            "n": board.n if board else selectors.DEFAULT_SHORTLIST_SIZE,
            "items": [
                {
                    "r": r,
                    "m": current.get(r["idea_id"]),
                    "page": page,
                    "marks": DecisionMark.Mark.choices,
                }
                for r in shown
            ],
            "off_board": [m for i, m in current.items() if i not in on_board],
            "counts": counts,
            "n_marked": len(current),
            "show": show,
            "page": page,
            "n_pages": n_pages,
            "query": urlencode({"domain": domain.key if domain else "", "show": show}),
            "domain_query": urlencode({"domain": domain.key if domain else ""}),
            "tab": "decide",
        },
    )


@managers_only
@require_POST
@without_cycle_collection
def mark_set(request: AuthenticatedHttpRequest, idea_id: int) -> HttpResponse:
    idea = _idea(idea_id)
    form = MarkForm(request.POST)
    domain = idea.patent.domain
    page = 1
    error = ""
    if not form.is_valid():
        error = "; ".join(f"{k}: {' '.join(str(e) for e in v)}" for k, v in form.errors.items())
    else:
        page = form.cleaned_data.get("page") or 1
        try:
            decision_mark_record(
                actor=request.user,
                idea=idea,
                mark=form.cleaned_data["mark"],
                note=form.cleaned_data.get("note", ""),
            )
        except ApplicationError as exc:
            error = str(exc)
    if request.htmx:
        board = selectors.domain_board(domain=domain.key)
        mark = selectors.mark_history(idea=idea).first()
        context = _row_context(board.row_for(idea.pk), idea, mark, page)
        return render(
            request,
            "decisions/_mark_row.html",
            # 200 even for a refusal: htmx swaps only successful answers, and the row must show
            # the error where the manager is (the form's select cannot send an empty mark).
            {**context, "error": error, "saved": not error},
        )
    if error:
        messages.error(request, f"Not recorded for {idea.external_id}: {error}")
    else:
        messages.success(request, f"Decision on {idea.external_id} recorded.")
    query = urlencode({"domain": domain.key, "page": page})
    return redirect(f"{reverse('decisions:marks')}?{query}#mark-{idea.pk}")


@managers_only
@require_GET
def mark_history(request: AuthenticatedHttpRequest, idea_id: int) -> HttpResponse:
    idea = _idea(idea_id)
    context = {
        "idea": idea,
        "history": list(selectors.mark_history(idea=idea)),
        "domain": idea.patent.domain,
        "tab": "decide",
    }
    template = "decisions/_mark_history.html" if request.htmx else "decisions/mark_history.html"
    return render(request, template, context)


def _csv_values(m: DecisionMark) -> list[Any]:
    f = m.figures or {}
    return [
        m.idea.external_id,
        m.idea_id,
        m.idea.display_title,
        m.domain.key,
        m.version,
        m.mark,
        m.note,
        m.decided_by.username if m.decided_by else None,
        m.decided_at.isoformat(),
        f.get("id"),
        f.get("computed_at"),
        f.get("rank"),
        f.get("estimate"),
        f.get("low"),
        f.get("high"),
        f.get("shortlist_size"),
        f.get("p_top_n"),
        None if "in_shortlist" not in f else ("true" if f["in_shortlist"] else "false"),
    ]


@managers_only
@require_GET
def marks_csv(request: AuthenticatedHttpRequest) -> HttpResponseBase:
    """The domain's current marks; with history=1 every version (oldest first per idea)."""
    domain = _domain(MarksPageForm(request.GET).value("domain"))
    if domain is None:
        raise Http404("No domain yet.")
    every = request.GET.get("history") == "1"
    if every:
        rows = (
            DecisionMark.objects.filter(domain=domain)
            .select_related("idea", "decided_by", "domain")
            .order_by("idea__external_id", "version")
        )
    else:
        rows = selectors.marks_current(domain=domain.key)
    name = f"pluralist-decisions-{domain.key}{'-history' if every else ''}.csv"
    return csv_response(name, MARKS_CSV_HEADER, [_csv_values(m) for m in rows])


@managers_only
@require_GET
@without_cycle_collection
def memo(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = MemoForm(request.GET)
    form.is_valid()
    domain = _domain(form.cleaned_data.get("domain"))
    if domain is None:
        raise Http404("No domain yet.")
    fmt = form.cleaned_data.get("format") or "html"
    text = decision_memo(domain=domain, fmt=fmt)
    kind = "text/html" if fmt == "html" else "text/markdown"
    response = HttpResponse(text, content_type=f"{kind}; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="pluralist-decision-memo-{domain.key}.{fmt}"'
    )
    return response


@managers_only
@require_POST
def shortlist_size(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = ShortlistSizeForm(request.POST)
    back = form.data.get("next") or reverse("decisions:decide")
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = reverse("decisions:decide")
    if not form.is_valid():
        messages.error(
            request,
            "The shortlist size was not changed: "
            + "; ".join(f"{k}: {' '.join(str(e) for e in v)}" for k, v in form.errors.items()),
        )
        return redirect(back)
    domain = selectors.domain_of(form.cleaned_data["domain"])
    if domain is None:
        messages.error(request, f"Unknown domain {form.cleaned_data['domain']!r}.")
        return redirect(back)
    try:
        shortlist_size_set(actor=request.user, domain=domain, size=form.cleaned_data["n"])
    except ApplicationError as exc:
        messages.error(request, str(exc))
        return redirect(back)
    messages.success(
        request, f"The shortlist of {domain.name} now holds {form.cleaned_data['n']} ideas."
    )
    return redirect(back)
