"""The numbers behind each chart as CSV, with the page's filters."""

from __future__ import annotations

from django.http import Http404, HttpResponseBase
from django.views.decorators.http import require_GET

from apps.accounts.requests import AuthenticatedHttpRequest
from apps.core.csv_export import csv_response
from apps.disagreement import presenters as P
from apps.disagreement import selectors
from apps.disagreement.models import MetricSlice
from apps.disagreement.views.dashboard import dashboard_for, managers_only

# The Decide CSV lives in the decisions app (export/decide.csv redirects there).
EXPORTS = ("grid", "strictness", "pairwise", "panel", "contested", "split")


@managers_only
@require_GET
def export_csv(request: AuthenticatedHttpRequest, kind: str) -> HttpResponseBase:
    """The numbers behind each chart, with the page's filters applied."""
    if kind not in EXPORTS:
        raise Http404("Unknown export.")
    dash = dashboard_for(request)
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
    else:  # pragma: no cover - EXPORTS is exhaustive
        raise Http404("Unknown export.")
    return csv_response(f"pluralist-{kind}-{dash.snapshot.id}.csv", header, rows)
