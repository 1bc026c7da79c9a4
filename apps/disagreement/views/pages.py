"""The dashboard pages (managers and admins; reviewers never see other reviewers' scores)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.module_loading import import_string
from django.views.decorators.http import require_GET

from apps.accounts.requests import AuthenticatedHttpRequest
from apps.catalog.models import Idea
from apps.disagreement import presenters as P
from apps.disagreement import selectors
from apps.disagreement.analysis.readings import MIN_PAIRS_FOR_VERDICT
from apps.disagreement.models import MetricSlice
from apps.disagreement.views.dashboard import dashboard_for, managers_only
from apps.screening.selectors import frame as ratings

# Rows of the contested table shown before "show all" (the CSV always has every row).
CONTESTED_SHOWN = 50
# Ideas split on a category level shown before "show all".
SPLIT_SHOWN = 15
# Shared ideas a reviewer pair needs before it is ranked among the most or least agreeing
# (the same bar as a pair's coarse Jaccard).
PAIR_MIN_ITEMS = 10


@managers_only
@require_GET
def overview(request: AuthenticatedHttpRequest) -> HttpResponse:
    dash = dashboard_for(request)
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
    dash = dashboard_for(request)
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
            scales=ratings.rubric_scales(),
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
    dash = dashboard_for(request)
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
    dash = dashboard_for(request)
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
    dash = dashboard_for(request)
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
    points = [
        {
            "x": r["raw_spread"],
            "y": r["z_spread"],
            "idea": r.get("title", r["idea"]),
            "dimension": r["dimension_name"],
        }
        for r in rows or []
        if r.get("z_spread") is not None
    ]
    # No point to place: the page says why instead of drawing empty axes.
    chart = {"points": points, "has_data": bool(points)}
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
    dash = dashboard_for(request)
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
            "title": ratings.idea_label(idea.title, idea.description, idea.external_id),
            "include_categories": include_categories,
            "dimensions": dimensions,
            "tab": "contested",
            "back": reverse(
                "decisions:decide"
                if request.GET.get("from") == "decide"
                else "disagreement:contested"
            ),
            "back_label": "Decide" if request.GET.get("from") == "decide" else "Contested ideas",
            **idea_sections(idea=idea, viewer=request.user),
        },
    )


def idea_sections(*, idea: Idea, viewer: Any) -> dict[str, Any]:
    """The context of the sections higher apps own on this page (their standing, findings,
    panel scores): the functions IDEA_PAGE_SECTIONS names in settings, each called with the idea
    and the viewer. A list in settings, not imports: those apps sit above this one."""
    context: dict[str, Any] = {}
    for path in settings.IDEA_PAGE_SECTIONS:
        context.update(import_string(path)(idea=idea, viewer=viewer))
    return context
