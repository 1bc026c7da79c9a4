"""Findings pages: the domain page, its CSV exports and the recompute; the idea fragment."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.catalog.models import Domain, Idea
from apps.core.csv_export import csv_response
from apps.core.errors import ApplicationError
from apps.disagreement import selectors as metric_selectors
from apps.disagreement.services import AUTO_SCOPE
from apps.findings import presenters as P
from apps.findings import selectors
from apps.findings.models import Source
from apps.findings.services import findings_request_recompute
from apps.screening.selectors.frame import dimension_labels

managers_only = role_required("manager", "admin")
SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")
# Domain findings listed on the page (the CSV has them all).
FINDINGS_SHOWN = 40


def _domain(request: AuthenticatedHttpRequest) -> Domain | None:
    """The domain asked for; the first domain when none or an unknown/malformed key is given."""
    key = request.GET.get("domain", "")
    domains = Domain.objects.order_by("key")
    found = domains.filter(key=key).first() if SLUG.fullmatch(key) else None
    return found or domains.first()


def _source(request: AuthenticatedHttpRequest) -> str:
    value = request.GET.get("source", Source.REVIEWERS)
    return value if value in Source.values else Source.REVIEWERS


def idea_findings_context(*, idea: Idea, viewer: Any) -> dict[str, Any]:
    """The minimal context of templates/findings/_idea_findings.html (an IDEA_PAGE_SECTIONS
    section)."""
    snapshot = selectors.snapshot_latest()
    if snapshot is None:
        return {"findings_ready": False}
    section = selectors.blind_section(selectors.idea_section(snapshot, idea=idea), viewer=viewer)
    judges = selectors.idea_section(snapshot, idea=idea, source=Source.JUDGES)
    return {
        "findings_ready": True,
        "findings": section,
        "judge_findings": judges if viewer.can_read_all_ratings else None,
        "findings_snapshot": snapshot,
        "findings_unsaturated_below": selectors.UNSATURATED_COVERAGE,
    }


@managers_only
@require_GET
def overview(request: AuthenticatedHttpRequest) -> HttpResponse:
    domain = _domain(request)
    source = _source(request)
    snapshot = selectors.snapshot_latest()
    running = selectors.snapshot_in_progress()
    context: dict[str, Any] = {
        "domains": Domain.objects.order_by("key"),
        "domain": domain,
        "source": source,
        "sources": Source.choices,
        "snapshot": snapshot,
        "running": running,
        "threshold": selectors.default_threshold(),
        "tab": "findings",
    }
    if snapshot is not None and domain is not None:
        summary = selectors.domain_summary(snapshot, domain=domain.key, source=source)
        if summary is not None:
            labels = dimension_labels()
            reliability = P.reliability_by_dimension(
                metric_selectors.latest_panel(scope=AUTO_SCOPE), domain=domain.key, labels=labels
            )
            ideas = selectors.idea_sections(snapshot, domain=domain.key, source=source)
            titles = dict(
                Idea.objects.filter(id__in=[int(i) for i in ideas]).values_list("id", "title")
            )
            flagged = selectors.unsaturated_idea_ids(domain=domain.key)
            context.update(
                summary=summary,
                headline=P.headline(summary["saturation"], reliability),
                chart=P.svg_chart(reliability, summary["saturation"]),
                reliability=reliability,
                dimensions=[
                    {"key": k, "name": labels.get(k, k), **v}
                    for k, v in summary["dimensions"].items()
                ],
                sweep=sorted(summary["sweep"].items(), key=lambda kv: float(kv[0])),
                findings_shown=summary["findings"][:FINDINGS_SHOWN],
                idea_rows=sorted(
                    (
                        {
                            "id": int(i),
                            "title": titles.get(int(i)) or f"Idea {i}",
                            "flagged": int(i) in flagged and source == Source.REVIEWERS,
                            **{k: v for k, v in s.items() if k != "findings"},
                        }
                        for i, s in ideas.items()
                    ),
                    key=lambda r: (r["coverage"] is None, r["coverage"] or 0),
                ),
            )
    return render(request, "findings/overview.html", context)


EXPORTS = ("scopes", "findings", "idea-findings")


@managers_only
@require_GET
def export_csv(request: AuthenticatedHttpRequest, kind: str) -> HttpResponseBase:
    """The page's numbers: every scope's estimates, the domain's findings, each idea's findings."""
    if kind not in EXPORTS:
        raise Http404("Unknown export.")
    domain = _domain(request)
    source = _source(request)
    snapshot = selectors.snapshot_latest()
    if snapshot is None or domain is None:
        raise Http404("No findings have been computed yet.")
    summary = selectors.domain_summary(snapshot, domain=domain.key, source=source) or {}
    ideas = selectors.idea_sections(snapshot, domain=domain.key, source=source)
    name = f"findings-{kind}-{domain.key}-{source}.csv"
    if kind == "scopes":
        rows = P.scope_rows({**summary, "ideas": ideas} if summary else None, domain=domain.key)
        return csv_response(name, P.SCOPE_CSV_COLUMNS, (P.scope_csv_row(r) for r in rows))
    if kind == "findings":
        header = ["finding_id", "name", "n_units", "n_reviewers", "n_ideas", "dimensions"]
        return csv_response(
            name,
            header,
            (
                [
                    f["id"],
                    f["name"],
                    f["n_units"],
                    f["n_reviewers"],
                    f["n_ideas"],
                    ";".join(f["dimensions"]),
                ]
                for f in summary.get("findings", [])
            ),
        )
    return csv_response(
        name,
        P.FINDING_CSV_COLUMNS,
        (
            [
                int(idea_id),
                f["id"],
                f["name"],
                len(f["members"]),
                ";".join(f["members"]),
                " | ".join(u["text"] for u in f["units"]),
            ]
            for idea_id, section in ideas.items()
            for f in section["findings"]
        ),
    )


@managers_only
@require_POST
def recompute(request: AuthenticatedHttpRequest) -> HttpResponse:
    try:
        findings_request_recompute(actor=request.user, threshold=request.POST.get("threshold"))
        messages.success(request, "Findings recompute queued; this page shows it when done.")
    except ApplicationError as exc:
        messages.error(request, str(exc))
    domain = request.POST.get("domain", "")
    query = f"?{urlencode({'domain': domain})}" if SLUG.fullmatch(domain) else ""
    return redirect(reverse("findings:overview") + query)
