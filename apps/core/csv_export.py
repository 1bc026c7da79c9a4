"""The one home for CSV exports: every CSV the product serves goes through `csv_response`.

Cells are neutralised against formula injection the OWASP way: a text cell that starts with
`=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with a single quote, so a spreadsheet
shows it as text instead of evaluating it. Numbers are written as numbers (a negative alpha
stays `-0.12`, not `'-0.12`); None becomes an empty cell. The installation archive uses a
reversible variant (`reversible_cell`, `restored_cell`), so a backup comes back exactly.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from django.http import StreamingHttpResponse

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """One cell, ready for csv.writer: None -> "", numbers untouched, risky text quoted."""
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return value
    text = str(value)
    if text.startswith(FORMULA_PREFIXES):
        return "'" + text
    return text


# The installation archive (apps.dataio.services.archive) is read back by the importers, so its
# neutralisation must be undone exactly: a cell that already starts with the quote is quoted too,
# and restoring drops exactly one leading quote from every cell that has one.
ARCHIVE_PREFIXES = (*FORMULA_PREFIXES, "'")


def reversible_cell(value: Any) -> str:
    """One archive cell: text, with a quote in front of anything a spreadsheet would evaluate
    (and of anything that already starts with a quote, so `restored_cell` is its exact inverse).
    """
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(ARCHIVE_PREFIXES) else text


def restored_cell(text: str) -> str:
    """The inverse of `reversible_cell`."""
    return text[1:] if text.startswith("'") else text


class _Echo:
    """csv.writer wants a file; this one hands each formatted line straight back."""

    def write(self, value: str) -> str:
        return value


def csv_lines(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow([safe_cell(h) for h in header])
    for row in rows:
        yield writer.writerow([safe_cell(v) for v in row])


def csv_response(
    filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]]
) -> StreamingHttpResponse:
    """A streamed CSV download; `rows` may be a generator (large exports never sit in memory)."""
    response = StreamingHttpResponse(
        csv_lines(header, rows), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
