"""Reads for the managers' ratings table and its CSV export (every reviewer's ratings)."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import QuerySet

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.screening.models import Rating

CSV_COLUMNS = [
    "reviewer",
    "domain",
    "patent",
    "idea",
    "idea_title",
    "dimension",
    "status",
    "status_label",
    "score",
    "answers",
    "rationale",
    "source",
    "updated_at",
]


def rating_table(
    *,
    domain: Domain | None = None,
    dimension_key: str = "",
    reviewer: User | None = None,
    status: str = "",
) -> QuerySet[Rating]:
    """All ratings matching the filters, with what the table shows joined in one query."""
    rows = Rating.objects.select_related("reviewer", "idea__patent__domain", "dimension")
    if domain is not None:
        rows = rows.filter(idea__patent__domain=domain)
    if dimension_key:
        rows = rows.filter(dimension__key=dimension_key)
    if reviewer is not None:
        rows = rows.filter(reviewer=reviewer)
    if status:
        rows = rows.filter(status=status)
    return rows.order_by(
        "idea__patent__domain__name",
        "idea__external_id",
        "reviewer__username",
        "dimension__position",
        "id",
    )


def rating_csv_rows(rows: QuerySet[Rating]) -> Iterator[list[object]]:
    """One list per rating, in CSV_COLUMNS order; streams through the rows in chunks."""
    for r in rows.iterator(chunk_size=2000):
        yield [
            r.reviewer.username,
            r.idea.patent.domain.key,
            r.idea.patent.external_id,
            r.idea.external_id,
            r.idea.display_title,
            r.dimension.key,
            r.status,
            r.get_status_display(),
            "" if r.score is None else r.score,
            ""
            if not r.answers
            else ";".join(f"{k}={'yes' if v else 'no'}" for k, v in sorted(r.answers.items())),
            r.rationale,
            r.source,
            r.updated_at.isoformat(),
        ]
