"""Disagreement dashboards for managers and admins (reviewers never see other reviewers' scores)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import role_required
from apps.catalog.models import Domain, Idea
from apps.core.csv_export import csv_response
from apps.core.errors import ApplicationError
from apps.core.requests import AuthenticatedHttpRequest
from apps.disagreement import presenters as P
from apps.disagreement import selectors
from apps.disagreement.analysis.metrics import MIN_PAIRS_FOR_VERDICT
from apps.disagreement.forms import BoardForm, DashboardFilterForm, RecomputeForm
from apps.disagreement.models import Level, MetricSlice, MetricSnapshot, scope_key
from apps.disagreement.services import metrics_request_recompute
from apps.panels.selectors import panel_scores_for_ideas

managers_only = role_required("manager", "admin")
# Rows of the contested table shown before "show all" (the CSV always has every row).
CONTESTED_SHOWN = 50
# Ideas split on a category level shown before "show all".
SPLIT_SHOWN = 15
# Shared ideas a reviewer pair needs before it is ranked among the most or least agreeing
# (the same bar as a pair's coarse Jaccard).
PAIR_MIN_ITEMS = 10


@dataclass
class Dashboard:
    """What every dashboard page shows above its chart: filters, snapshot and freshness."""

    form: DashboardFilterForm
    domain: str | None
    dimension: str | None
    background: str | None
    level: str
    include_categories: bool
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

    @property
    def focus_domain_name(self) -> str:
        return P.label_domain(self.focus_domain, self.domain_names)

    @property
    def dimension_name(self) -> str:
        return self.labels.get(self.dimension, self.dimension) if self.dimension else ""

    @property
    def groups(self) -> list[str]:
        return P.groups_in(self.result)

    @property
    def category_levels(self) -> dict[str, list[int]]:
        return self.result.get("categories", {}).get("levels", {})

    def context(self, **extra: Any) -> dict[str, Any]:
        # Filters a page does not apply are not offered (the template hides them).
        return {"dash": self, "hidden_filters": (), **extra}


def _dashboard(request: AuthenticatedHttpRequest) -> Dashboard:
    labels = selectors.dimension_labels()
    form = DashboardFilterForm(
        request.GET, dimension_labels=labels, backgrounds=selectors.background_groups()
    )
    level = form.value("level") or Level.ORDINAL
    include_categories = form.value("categories") == "include"
    since, until = form.value("since"), form.value("until")
    scope = scope_key(level=level, since=since, until=until, include_categories=include_categories)
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
        include_categories=include_categories,
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
def overview(request: AuthenticatedHttpRequest) -> HttpResponse:
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
            dash.result,
            labels=dash.labels,
            domain=dash.focus_domain,
            background=bg,
            dimension=dash.dimension,
        )
        categories = P.category_rows(
            dash.result, labels=dash.labels, domain=dash.focus_domain, dimension=dash.dimension
        )
    else:
        categories = []
    return render(
        request,
        "disagreement/overview.html",
        dash.context(
            grid=grid,
            chart=chart,
            categories=categories,
            min_pairs=MIN_PAIRS_FOR_VERDICT,
            tab="overview",
            has_ratings=selectors.ratings_exist(),
        ),
    )


@managers_only
@require_GET
def strictness(request: AuthenticatedHttpRequest) -> HttpResponse:
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
            groups=dash.groups,
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
def agreement(request: AuthenticatedHttpRequest) -> HttpResponse:
    dash = _dashboard(request)
    metric = "jaccard" if request.GET.get("metric") == "jaccard" else "alpha"
    dims = P.dimensions_in(dash.result, dash.labels) if dash.snapshot else []
    dimension = dash.dimension or (dims[0] if dims else None)
    matrix = pairs = None
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
        matrix = P.heatmap(rows, metric=metric, backgrounds=backgrounds, groups=dash.groups)
        pairs = P.pair_extremes(rows, metric=metric, min_items=PAIR_MIN_ITEMS)
    return render(
        request,
        "disagreement/agreement.html",
        dash.context(
            matrix=matrix,
            pairs=pairs,
            metric=metric,
            dimension=dimension,
            dimension_name=dash.labels.get(dimension or "", dimension),
            tab="agreement",
        ),
    )


@managers_only
@require_GET
def panel(request: AuthenticatedHttpRequest) -> HttpResponse:
    dash = _dashboard(request)
    chart = rows = None
    if dash.snapshot:
        chart = P.panel_chart(
            dash.result, labels=dash.labels, domain=dash.focus_domain, dimension=dash.dimension
        )
        rows = P.panel_rows(dash.result, labels=dash.labels, domain=dash.focus_domain)
        if dash.dimension:
            rows = [r for r in rows if r["key"] == dash.dimension]
    return render(
        request, "disagreement/panel.html", dash.context(chart=chart, rows=rows, tab="panel")
    )


@managers_only
@require_GET
def contested(request: AuthenticatedHttpRequest) -> HttpResponse:
    dash = _dashboard(request)
    sort = "raw_spread" if request.GET.get("sort") == "raw" else "z_spread"
    rows = None
    split: list[dict[str, Any]] = []
    if dash.snapshot:
        rows = P.filter_rows(
            dash.result.get("contested", []), domain=dash.domain, dimension=dash.dimension
        )
        rows = P.contested_sorted(rows, by_raw=sort == "raw_spread")
        split = [
            {**r, "dimension_name": dash.labels.get(r["dimension"], r["dimension"])}
            for r in P.filter_rows(
                dash.result.get("categories", {}).get("split_ideas", []),
                domain=dash.domain,
                dimension=dash.dimension,
            )
        ]
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
                "idea": r.get("title", r["idea"]),
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
            rows=shown,
            total=total,
            show_all=show_all,
            chart=chart,
            sort=sort,
            split=split if request.GET.get("split") == "all" else split[:SPLIT_SHOWN],
            split_total=len(split),
            tab="contested",
        ),
    )


@managers_only
@require_GET
def split(request: AuthenticatedHttpRequest) -> HttpResponse:
    dash = _dashboard(request)
    rows = chart = None
    if dash.snapshot:
        rows = P.split_rows(
            dash.result, labels=dash.labels, domain=dash.focus_domain, groups=dash.groups
        )
        if dash.dimension:
            rows = [r for r in rows if r["key"] == dash.dimension]
        chart = P.split_chart(rows, groups=dash.groups)
    group_labels = [P.label_background(g) for g in dash.groups] + ["Everyone"]
    return render(
        request,
        "disagreement/split.html",
        dash.context(rows=rows, chart=chart, group_labels=group_labels, tab="split"),
    )


def _board(dash: Dashboard, request: AuthenticatedHttpRequest) -> dict[str, Any]:
    """The decision board of one domain (and dimension, or all), searched and ordered."""
    form = BoardForm(request.GET)
    form.is_valid()
    data = form.cleaned_data if hasattr(form, "cleaned_data") else {}
    sort = data.get("sort") or "calibrated"
    query = data.get("q") or ""
    domains = [d for d in P.domains_in(dash.result) if d != P.ALL]
    domain = dash.domain if dash.domain in domains else (domains[0] if domains else None)
    dimension = dash.dimension or P.ALL
    rows: list[dict[str, Any]] = []
    if dash.snapshot and domain:
        rows = selectors.snapshot_slices(
            dash.snapshot, kind=MetricSlice.Kind.BOARD, domain=domain, dimension=dimension
        )
    total = len(rows)
    rows = P.board_rows(
        rows,
        sort=sort,
        query=query,
        predicted_key="pred_z_mean" if dimension == P.ALL else "pred_mean",
    )
    return {
        "board_form": form,
        "sort": sort,
        "query": query,
        "domain": domain,
        "dimension": dimension,
        "rows": rows,
        "total": total,
    }


@managers_only
@require_GET
def decide(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The shortlist a manager acts on: one domain's ideas with scores and predictions."""
    dash = _dashboard(request)
    board = _board(dash, request)
    page = board["board_form"].cleaned_data.get("page") or 1
    n_pages = max(1, -(-len(board["rows"]) // P.BOARD_PAGE))
    page = min(page, n_pages)
    start = (page - 1) * P.BOARD_PAGE
    shown = P.board_display(
        board["rows"][start : start + P.BOARD_PAGE],
        overall=board["dimension"] == P.ALL,
        category_levels=dash.category_levels,
    )
    params = {k: v for k, v in request.GET.items() if k in ("q", "sort") and v}
    board_query = "&".join(part for part in (dash.query, urlencode(params)) if part)
    return render(
        request,
        "disagreement/decide.html",
        dash.context(
            **board,
            shown=shown,
            first=start + 1,
            page=page,
            n_pages=n_pages,
            board_query=board_query,
            sort_label=P.BOARD_SORTS[board["sort"]],
            sorts=[
                ("calibrated", "Calibrated mean"),
                ("agreement", "Agreement"),
                ("predicted", "Predicted score"),
            ],
            domain_name=P.label_domain(board["domain"] or "", dash.domain_names),
            board_domains=[
                (d, P.label_domain(d, dash.domain_names))
                for d in P.domains_in(dash.result)
                if d != P.ALL
            ],
            domain_query=urlencode(
                {
                    k: v
                    for k, v in request.GET.items()
                    if k in dash.form.fields and k != "domain" and v
                }
            ),
            dimension_name=dash.labels.get(board["dimension"], "all dimensions"),
            overall=board["dimension"] == P.ALL,
            hidden_filters=("background",),
            tab="decide",
        ),
    )


@managers_only
@require_GET
def idea_detail(request: AuthenticatedHttpRequest, idea_id: int) -> HttpResponse:
    idea = get_object_or_404(Idea.objects.select_related("patent", "patent__domain"), id=idea_id)
    include_categories = request.GET.get("categories") == "include"
    dimensions = selectors.idea_ratings_detail(idea=idea, include_categories=include_categories)
    return render(
        request,
        "disagreement/idea_detail.html",
        {
            "idea": idea,
            "title": selectors.idea_label(idea.title, idea.description, idea.external_id),
            "include_categories": include_categories,
            "dimensions": dimensions,
            # LLM panel scores, shown apart from the people's (apps.panels).
            "panel_scores": panel_scores_for_ideas(idea_ids=[idea.id]).get(idea.id, []),
            "tab": "contested",
            "back": reverse(
                "disagreement:decide"
                if request.GET.get("from") == "decide"
                else "disagreement:contested"
            ),
            "back_label": "Decide" if request.GET.get("from") == "decide" else "Contested ideas",
        },
    )


EXPORTS = ("grid", "strictness", "pairwise", "panel", "contested", "split", "decide")


@managers_only
@require_GET
def export_csv(request: AuthenticatedHttpRequest, kind: str) -> HttpResponseBase:
    """The numbers behind each chart, with the page's filters applied."""
    if kind not in EXPORTS:
        raise Http404("Unknown export.")
    dash = _dashboard(request)
    if dash.snapshot is None:
        raise Http404("No metrics have been computed for this scope yet.")
    result, filters = dash.result, {"domain": dash.domain, "dimension": dash.dimension}
    if kind == "grid":
        # The Overview's grid: one background (everyone unless filtered), every group in split.
        header, rows = P.grid_csv(result, background=dash.background or P.ALL, **filters)
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
        header, rows = P.contested_csv(
            P.filter_rows(result.get("contested", []), **filters),
            by_raw=request.GET.get("sort") == "raw",
        )
    elif kind == "split":
        split = P.split_rows(
            result, labels=dash.labels, domain=dash.focus_domain, groups=dash.groups
        )
        if dash.dimension:
            split = [r for r in split if r["key"] == dash.dimension]
        header, rows = P.split_csv(split, domain=dash.focus_domain)
    else:
        board = _board(dash, request)
        header, rows = P.board_csv(board["rows"], sort=board["sort"])
    return csv_response(f"pluralist-{kind}-{dash.snapshot.id}.csv", header, rows)


@managers_only
@require_POST
def recompute(request: AuthenticatedHttpRequest) -> HttpResponse:
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
            include_categories=data.get("categories") == "include",
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
def snapshot_progress(request: AuthenticatedHttpRequest, snapshot_id: int) -> HttpResponse:
    snapshot = get_object_or_404(MetricSnapshot.objects.defer("result"), id=snapshot_id)
    response = render(request, "disagreement/_progress.html", {"snapshot": snapshot})
    if request.htmx and snapshot.status == MetricSnapshot.Status.DONE:
        # The polling stops here; reload the page so the new numbers replace the old ones.
        response["HX-Refresh"] = "true"
    return response
