"""Managers' and admins' read-only table of every rating, with a streaming CSV export."""

from __future__ import annotations

import csv
from collections.abc import Iterator

from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import render

from apps.accounts.permissions import role_required
from apps.screening.forms import RatingFilterForm
from apps.screening.models import Rating
from apps.screening.selectors.rating_table import CSV_COLUMNS, rating_csv_rows, rating_table

PAGE_SIZE = 50


class _Echo:
    """csv.writer wants a file; this one hands each formatted line straight back."""

    def write(self, value: str) -> str:
        return value


@role_required("manager", "admin")
def ratings(request: HttpRequest, as_csv: bool = False) -> HttpResponseBase:
    form = RatingFilterForm(request.GET or None)
    filters = form.cleaned_data if form.is_bound and form.is_valid() else {}
    rows = rating_table(
        domain=filters.get("domain"),
        dimension_key=filters.get("dimension") or "",
        reviewer=filters.get("reviewer"),
        status=filters.get("status") or "",
    )
    if as_csv or request.GET.get("format") == "csv":
        return _csv_response(rows)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    query.pop("format", None)
    return render(
        request,
        "screening/ratings.html",
        {"form": form, "page": page, "query": query.urlencode()},
    )


def _csv_response(rows: QuerySet[Rating]) -> StreamingHttpResponse:
    writer = csv.writer(_Echo())

    def lines() -> Iterator[str]:
        yield writer.writerow(CSV_COLUMNS)
        for row in rating_csv_rows(rows):
            yield writer.writerow(row)

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="ratings.csv"'
    return response
