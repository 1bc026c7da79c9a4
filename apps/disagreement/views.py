"""Disagreement dashboards for managers and admins (reviewers never see other reviewers' scores)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import role_required
from apps.catalog.models import Domain, Idea
from apps.core.csv_export import csv_response
from apps.core.errors import ApplicationError
from apps.disagreement import presenters as P
from apps.disagreement import selectors
from apps.disagreement.forms import DashboardFilterForm, RecomputeForm
from apps.disagreement.models import Level, MetricSlice, MetricSnapshot, scope_key
from apps.disagreement.services import metrics_request_recompute

managers_only = role_required("manager", "admin")
# Rows of the contested table shown before "show all" (the CSV always has every row).
CONTESTED_SHOWN = 50


@dataclass
class Dashboard:
    """What every dashboard page shows above its chart: filters, snapshot and freshness."""

    form: DashboardFilterForm
    domain: str | None
    dimension: str | None
    background: str | None
    level: str
    since: Any
    until: Any
    scope: str
    snapshot: MetricSnapshot | None
    in_progress: MetricSnapshot | None
    failure: MetricSnapshot | None
    freshness: selectors.Freshness | None
    labels: dict[str, str]
    domain_names: dict[str, str]
    query: str

    @property
    def result(self) -> dict[str, Any]:
        return (self.snapshot.result or {}) if self.snapshot else {}

    @property
    def focus_domain(self) -> str:
        return self.domain or P.ALL

    def context(self, **extra: Any) -> dict[str, Any]:
        return {"dash": self, **extra}


def _dashboard(request: HttpRequest) -> Dashboard:
    labels = selectors.dimension_labels()
    form = DashboardFilterForm(request.GET, dimension_labels=labels)
    level = form.value("level") or Level.ORDINAL
    since, until = form.value("since"), form.value("until")
    scope = scope_key(level=level, since=since, until=until)
    snapshot = selectors.snapshot_latest(scope=scope)
    in_progress = selectors.snapshot_in_progress(scope=scope)
    failure = selectors.snapshot_last_failure(
        scope=scope, after=snapshot.created_at if snapshot else None
    )
    params = {k: v for k, v in request.GET.items() if k in form.fields and v}
    return Dashboard(
        form=form,
        domain=form.value("domain"),
        dimension=form.value("dimension"),
        background=form.value("background"),
        level=level,
        since=since,
        until=until,
        scope=scope,
        snapshot=snapshot,
        in_progress=in_progress,
        failure=failure,
        freshness=selectors.snapshot_freshness(snapshot) if snapshot else None,
        labels=labels,
        domain_names=dict(Domain.objects.values_list("key", "name")),
        query=urlencode(params),
    )


@managers_only
@require_GET
def overview(request: HttpRequest) -> HttpResponse:
    dash = _dashboard(request)
    bg = dash.background or P.ALL
    grid = chart = None
    if dash.snapshot:
        grid = P.grid(
            dash.result,
            labels=dash.labels,
            domain_names=dash.domain_names,
            domain=dash.domain,
            dimension=dash.dimension,
            background=bg,
        )
        chart = P.grid_chart(
            dash.result, labels=dash.labels, domain=dash.focus_domain, background=bg
        )
    return render(
        request,
        "disagreement/overview.html",
        dash.context(grid=grid, chart=chart, tab="overview", has_ratings=selectors.ratings_exist()),
    )


@managers_only
@require_GET
def strictness(request: HttpRequest) -> HttpResponse:
    dash = _dashboard(request)
    normalise = request.GET.get("view") == "scaled"
    chart = spread = None
    if dash.snapshot:
        rows = P.filter_rows(
            selectors.snapshot_slices(
                dash.snapshot,
                kind=MetricSlice.Kind.STRICTNESS,
                domain=dash.focus_domain,
                dimension=dash.dimension,
            ),
            background=dash.background,
        )
        dims = [
            d
            for d in P.dimensions_in(dash.result, dash.labels)
            if not dash.dimension or d == dash.dimension
        ]
        chart = P.strictness_chart(
            rows,
            dims=dims,
            labels=dash.labels,
            scales=selectors.rubric_scales(),
            normalise=normalise,
        )
        spread = [
            {**s, "name": dash.labels.get(s["dimension"], s["dimension"])}
            for s in P.filter_rows(
                dash.result.get("strictness_spread", []),
                domain=dash.focus_domain,
                dimension=dash.dimension,
            )
        ]
    return render(
        request,
        "disagreement/strictness.html",
        dash.context(chart=chart, spread=spread, normalise=normalise, tab="strictness"),
    )


@managers_only
@require_GET
def agreement(request: HttpRequest) -> HttpResponse:
    dash = _dashboard(request)
    metric = "jaccard" if request.GET.get("metric") == "jaccard" else "alpha"
    dims = P.dimensions_in(dash.result, dash.labels) if dash.snapshot else []
    dimension = dash.dimension or (dims[0] if dims else None)
    matrix = None
    if dash.snapshot and dimension:
        rows = selectors.snapshot_slices(
            dash.snapshot,
            kind=MetricSlice.Kind.PAIRWISE,
            domain=dash.focus_domain,
            dimension=dimension,
        )
        backgrounds = {
            r["reviewer"]: r.get("background", "")
            for r in selectors.snapshot_slices(
                dash.snapshot,
                kind=MetricSlice.Kind.STRICTNESS,
                domain=dash.focus_domain,
                dimension=dimension,
            )
        }
        if dash.background:
            rows = [
                r
                for r in rows
                if backgrounds.get(r["reviewer_a"]) == dash.background
                and backgrounds.get(r["reviewer_b"]) == dash.background
            ]
        matrix = P.heatmap(rows, metric=metric, backgrounds=backgrounds)
    return render(
        request,
        "disagreement/agreement.html",
        dash.context(
            matrix=matrix,
            metric=metric,
            dimension=dimension,
            dimension_name=dash.labels.get(dimension or "", dimension),
            tab="agreement",
        ),
    )


@managers_only
@require_GET
def panel(request: HttpRequest) -> HttpResponse:
    dash = _dashboard(request)
    chart = rows = None
    if dash.snapshot:
        chart = P.panel_chart(dash.result, labels=dash.labels, domain=dash.focus_domain)
        rows = P.panel_rows(dash.result, labels=dash.labels, domain=dash.focus_domain)
        if dash.dimension:
            keep = dash.labels.get(dash.dimension, dash.dimension)
            chart["series"] = [s for s in chart["series"] if s["label"] == keep]
            rows = [r for r in rows if r["key"] == dash.dimension]
    return render(
        request, "disagreement/panel.html", dash.context(chart=chart, rows=rows, tab="panel")
    )


@managers_only
@require_GET
def contested(request: HttpRequest) -> HttpResponse:
    dash = _dashboard(request)
    sort = "raw_spread" if request.GET.get("sort") == "raw" else "z_spread"
    rows = None
    if dash.snapshot:
        rows = P.filter_rows(
            dash.result.get("contested", []), domain=dash.domain, dimension=dash.dimension
        )
        rows = sorted(rows, key=lambda r: -(r.get(sort) or 0))
        rows = [
            {
                **r,
                "dimension_name": dash.labels.get(r["dimension"], r["dimension"]),
                "domain_name": dash.domain_names.get(r["domain"], r["domain"]),
            }
            for r in rows
        ]
    chart = {
        "points": [
            {
                "x": r["raw_spread"],
                "y": r["z_spread"],
                "idea": r["idea"],
                "dimension": r["dimension_name"],
            }
            for r in rows or []
            if r.get("z_spread") is not None
        ]
    }
    total = len(rows or [])
    show_all = request.GET.get("all") == "1"
    shown = rows if show_all or rows is None else rows[:CONTESTED_SHOWN]
    return render(
        request,
        "disagreement/contested.html",
        dash.context(
            rows=shown, total=total, show_all=show_all, chart=chart, sort=sort, tab="contested"
        ),
    )


@managers_only
@require_GET
def split(request: HttpRequest) -> HttpResponse:
    dash = _dashboard(request)
    rows = chart = None
    if dash.snapshot:
        rows = P.split_rows(dash.result, labels=dash.labels, domain=dash.focus_domain)
        if dash.dimension:
            rows = [r for r in rows if r["key"] == dash.dimension]
        chart = P.split_chart(rows)
    return render(
        request, "disagreement/split.html", dash.context(rows=rows, chart=chart, tab="split")
    )


@managers_only
@require_GET
def idea_detail(request: HttpRequest, idea_id: int) -> HttpResponse:
    idea = get_object_or_404(Idea.objects.select_related("patent", "patent__domain"), id=idea_id)
    dimensions = selectors.idea_ratings_detail(idea=idea)
    return render(
        request,
        "disagreement/idea_detail.html",
        {
            "idea": idea,
            "dimensions": dimensions,
            "tab": "contested",
            "back": reverse("disagreement:contested"),
        },
    )


EXPORTS = ("grid", "strictness", "pairwise", "panel", "contested", "split")


@managers_only
@require_GET
def export_csv(request: HttpRequest, kind: str) -> HttpResponseBase:
    """The numbers behind each chart, with the page's filters applied."""
    if kind not in EXPORTS:
        raise Http404("Unknown export.")
    dash = _dashboard(request)
    if dash.snapshot is None:
        raise Http404("No metrics have been computed for this scope yet.")
    result, filters = dash.result, {"domain": dash.domain, "dimension": dash.dimension}
    if kind == "grid":
        header, rows = P.grid_csv(result, background=dash.background, **filters)
    elif kind == "strictness":
        header, rows = P.strictness_csv(
            P.filter_rows(
                selectors.snapshot_slices(
                    dash.snapshot, kind=MetricSlice.Kind.STRICTNESS, **filters
                ),
                background=dash.background,
            )
        )
    elif kind == "pairwise":
        header, rows = P.pairwise_csv(
            selectors.snapshot_slices(dash.snapshot, kind=MetricSlice.Kind.PAIRWISE, **filters)
        )
    elif kind == "panel":
        header, rows = P.panel_csv(result, **filters)
    elif kind == "contested":
        header, rows = P.contested_csv(P.filter_rows(result.get("contested", []), **filters))
    else:
        header, rows = P.grid_csv(result, **filters)
        rows = [r for r in rows if r[2] in ("technical", "business", P.ALL)]
    return csv_response(f"pluralist-{kind}-{dash.snapshot.id}.csv", header, rows)


@managers_only
@require_POST
def recompute(request: HttpRequest) -> HttpResponse:
    form = RecomputeForm(request.POST)
    form.is_valid()
    data = form.cleaned_data
    back = reverse("disagreement:overview") + (
        f"?{request.POST.get('next_query')}" if request.POST.get("next_query") else ""
    )
    try:
        snapshot = metrics_request_recompute(
            actor=request.user,
            level=data.get("level") or Level.ORDINAL,
            since=data.get("since"),
            until=data.get("until"),
        )
    except ApplicationError as exc:
        if request.htmx:
            return render(
                request, "disagreement/_progress.html", {"error": exc.message}, status=503
            )
        messages.error(request, exc.message)
        return redirect(back)
    if request.htmx:
        return render(request, "disagreement/_progress.html", {"snapshot": snapshot})
    messages.success(request, "Recompute queued; this page shows the result when it is done.")
    return redirect(back)


@managers_only
@require_GET
def snapshot_progress(request: HttpRequest, snapshot_id: int) -> HttpResponse:
    snapshot = get_object_or_404(MetricSnapshot.objects.defer("result"), id=snapshot_id)
    response = render(request, "disagreement/_progress.html", {"snapshot": snapshot})
    if request.htmx and snapshot.status == MetricSnapshot.Status.DONE:
        # The polling stops here; reload the page so the new numbers replace the old ones.
        response["HX-Refresh"] = "true"
    return response
