"""Managers' and admins' read-only table of every rating, with a streaming CSV export."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpResponseBase
from django.shortcuts import render

from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.core.csv_export import csv_response
from apps.screening.forms import RatingFilterForm
from apps.screening.selectors.rating_table import CSV_COLUMNS, rating_csv_rows, rating_table

PAGE_SIZE = 50


@role_required("manager", "admin")
def ratings(request: AuthenticatedHttpRequest, as_csv: bool = False) -> HttpResponseBase:
    form = RatingFilterForm(request.GET or None)
    filters = form.cleaned_data if form.is_bound and form.is_valid() else {}
    rows = rating_table(
        domain=filters.get("domain"),
        dimension_key=filters.get("dimension") or "",
        reviewer=filters.get("reviewer"),
        status=filters.get("status") or "",
    )
    if as_csv or request.GET.get("format") == "csv":
        return csv_response("ratings.csv", CSV_COLUMNS, rating_csv_rows(rows))
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    query.pop("format", None)
    return render(
        request,
        "screening/ratings.html",
        {"form": form, "page": page, "query": query.urlencode()},
    )
