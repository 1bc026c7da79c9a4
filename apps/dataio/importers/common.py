"""What every importer checks its frame with, and how it reports problems by row and field.

An importer reads its file into a frame of stripped strings with a `_row` column
(apps.dataio.importers.reading); checks are vectorised over whole columns so a million rows
validate in seconds, and each failing cell becomes one FieldError naming its row, column and
value, all reported at once (`Problems`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from apps.core import untrusted
from apps.core.errors import ApplicationError, FieldError

ROW = "_row"
# Beyond this many problems the file is clearly the wrong one; listing a million errors helps
# nobody, so the rest are summarised in one final entry.
MAX_ERRORS = 10_000


@dataclass
class Problems:
    """Every problem found in one file, reported all at once."""

    errors: list[FieldError] = field(default_factory=list)
    dropped: int = 0

    def add(self, fld: str, message: str, *, row: int | None = None, value: object = None) -> None:
        if len(self.errors) >= MAX_ERRORS:
            self.dropped += 1
            return
        shown = None if value is None else str(value)
        if shown is not None and len(shown) > 200:
            shown = shown[:200] + "…"
        self.errors.append(FieldError(field=fld, message=message, row=row, value=shown))

    def add_rows(
        self, frame: pd.DataFrame, mask: Any, fld: str, message: str, *, column: str | None = None
    ) -> None:
        """One error per row of `frame` selected by `mask`, showing that row's `column` value."""
        hit = frame.loc[mask]
        if hit.empty:
            return
        col = column or fld
        values: Iterable[Any] = hit[col].tolist() if col in hit.columns else [None] * len(hit)
        for row, value in zip(hit[ROW].tolist(), values, strict=True):
            self.add(fld, message, row=int(row), value=value)

    def __bool__(self) -> bool:
        return bool(self.errors)

    def raise_if_any(self, message: str) -> None:
        if not self.errors:
            return
        errors = sorted(self.errors, key=lambda e: (e.row or 0, e.field))
        if self.dropped:
            errors.append(
                FieldError(field="file", message=f"… and {self.dropped} more problems not listed")
            )
        total = len(self.errors) + self.dropped
        noun = "problem" if total == 1 else "problems"
        raise ApplicationError(
            f"{message} {total} {noun} found; nothing was imported.", errors=errors
        )


def per_distinct(column: pd.Series, convert: Callable[[pd.Series], pd.Series]) -> pd.Series:
    """`convert(column)`, computed once per distinct value: a ratings file repeats its reviewers,
    dimensions and ideas on a million rows, and hashing a string is cheaper than a string
    method called on it."""
    codes, distinct = pd.factorize(column, use_na_sentinel=False)
    if len(distinct) == len(column):
        return convert(column)
    converted = convert(pd.Series(distinct, name=column.name))
    return pd.Series(converted.array.take(codes), index=column.index, name=column.name)


def check_columns(
    frame: pd.DataFrame, *, required: Sequence[str], optional: Sequence[str], kind: str
) -> None:
    """Refuse files whose columns are missing or unknown, naming each one."""
    present = [c for c in frame.columns if c != ROW]
    missing = [c for c in required if c not in present]
    unknown = [c for c in present if c not in required and c not in optional]
    errors = [
        FieldError(field=c, message="is a required column and is missing", row=1) for c in missing
    ]
    errors += [
        FieldError(
            field=c,
            message="is not a known column (expected: " + ", ".join([*required, *optional]) + ")",
            row=1,
            value=c,
        )
        for c in unknown
    ]
    dupes = sorted({c for c in present if present.count(c) > 1})
    errors += [
        FieldError(field=c, message="appears twice in the header", row=1, value=c) for c in dupes
    ]
    if errors:
        raise ApplicationError(
            f"The {kind} file has the wrong columns; nothing was imported.", errors=errors
        )


def require_values(frame: pd.DataFrame, problems: Problems, columns: Sequence[str]) -> pd.Series:
    """Report empty required cells; returns the mask of rows that have all of them."""
    ok = pd.Series(True, index=frame.index)
    for col in columns:
        empty = frame[col] == ""
        problems.add_rows(frame, empty, col, "is required")
        ok &= ~empty
    return ok


def check_lengths(frame: pd.DataFrame, problems: Problems, limits: dict[str, int]) -> None:
    for col, limit in limits.items():
        if col in frame.columns:
            too_long = frame[col].str.len() > limit
            problems.add_rows(frame, too_long, col, f"is longer than {limit} characters")


def report_duplicates(
    frame: pd.DataFrame, problems: Problems, keys: list[str], *, field_name: str
) -> pd.Series:
    """Rows repeating an earlier row's key are errors: an import must say one thing per key."""
    dup = frame.duplicated(subset=keys, keep="first")
    if dup.any():
        first_row = frame.groupby(keys, sort=False)[ROW].transform("first")
        hit = frame.loc[dup]
        for row, first, value in zip(
            hit[ROW].tolist(),
            first_row[dup].tolist(),
            hit[keys].astype(str).agg(" / ".join, axis=1).tolist(),
            strict=True,
        ):
            problems.add(field_name, f"repeats the key of row {first}", row=int(row), value=value)
    return dup


SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
# A whole number in ASCII digits, as many as an int64 always holds: `\d` would also match "٣"
# or "²" (Unicode digits), which pandas then reads as nothing and int() as another number or not
# at all; 5,000 digits made int() raise (a 500). Same bound as apps.core.untrusted.parse_int.
INTEGER = rf"^[+-]?[0-9]{{1,{untrusted.MAX_INT_DIGITS}}}$"


def chunked(values: Sequence[Any], size: int = 5000) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]
