"""Reading import files (CSV or JSON Lines) into frames of strings.

Every importer works on a pandas frame whose cells are stripped strings ("" for empty) plus a
`_row` column: the spreadsheet row for CSV (the header is row 1, so data starts at row 2) and the
line number for JSON Lines. Checks are vectorised over whole columns so a million rows validate
in seconds; each failing cell becomes one FieldError naming its row, column and value.

A file arrives as bytes (tests, the archive's members) or as a binary file object (an upload,
which Django keeps on disk above FILE_UPLOAD_MAX_MEMORY_SIZE; the command's open file). Either way
it is read as a stream: decoded chunk by chunk while pandas (CSV) or the line loop (JSON Lines)
parses it, so no copy of the whole file as bytes or text is ever held (issue 21.2: a 100 MB file
used to cost the bytes, their decoded text and a StringIO of it before the frame).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Sequence
from typing import Any

import pandas as pd
from django.conf import settings

from apps.core import untrusted
from apps.core.errors import ApplicationError, FieldError
from apps.dataio.importers.common import ROW, Problems, per_distinct
from apps.dataio.importers.shape import (
    refuse_long_cells,
    refuse_long_lines,
    refuse_nul_characters,
    refuse_wide_header,
)
from apps.dataio.importers.streams import STREAM_CHUNK, ImportContent, text_stream

CSV_EXTENSIONS = (".csv",)
JSONL_EXTENSIONS = (".jsonl", ".ndjson")


def file_format(filename: str, *, allowed: Sequence[str]) -> str:
    name = filename.lower()
    for fmt, exts in (("csv", CSV_EXTENSIONS), ("jsonl", JSONL_EXTENSIONS)):
        if fmt in allowed and name.endswith(exts):
            return fmt
    raise ApplicationError(
        "Unsupported file type.",
        errors=[
            FieldError(
                field="file",
                message="use a .csv or .jsonl (.ndjson) file",
                value=filename,
            )
        ],
    )


def _cell(value: Any) -> str:
    """A JSON value as the string a CSV cell would hold."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ";".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)


def read_table(content: ImportContent, filename: str) -> pd.DataFrame:
    """The file as a frame of stripped strings with a `_row` column; raises on unreadable files.

    `content` is read as a stream (see the module's docstring), never held whole."""
    fmt = file_format(filename, allowed=("csv", "jsonl"))
    if fmt == "csv":
        refuse_wide_header(content)  # first: it names the problem of a wide file better
    refuse_long_lines(content)
    if fmt == "csv":
        frame = _read_csv(content)
    else:
        frame = _read_jsonl(content)
    refuse_nul_characters(frame)
    refuse_long_cells(frame)
    return frame


def _is_blank(content: ImportContent) -> bool:
    """Whether the file holds only whitespace, read until its first other character."""
    with text_stream(content, newline="") as text:
        while chunk := text.read(STREAM_CHUNK):
            if chunk.strip():
                return False
    return True


def _read_csv(content: ImportContent) -> pd.DataFrame:
    if _is_blank(content):
        raise ApplicationError(
            "The file is empty.", errors=[FieldError(field="file", message="has no header row")]
        )
    try:
        # pandas reads the decoding stream in blocks and builds each column as it goes; every
        # column is text (dtype=str), as the importers' checks expect.
        with text_stream(content, newline="") as text:
            frame = pd.read_csv(
                text,
                dtype=str,
                keep_default_na=False,
                na_filter=False,
                skip_blank_lines=True,
                quoting=csv.QUOTE_MINIMAL,
            )
    except pd.errors.ParserError as exc:
        # pandas counts physical lines from 1 including the header, like our rows do.
        match = re.search(r"line (\d+)", str(exc))
        row = int(match.group(1)) if match else None
        raise ApplicationError(
            "The CSV file cannot be read.",
            errors=[FieldError(field="file", message=str(exc).strip(), row=row)],
        ) from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    # Positional rows: with quoted newlines this is the record number, which is what
    # spreadsheets show as the row number.
    frame[ROW] = range(2, len(frame) + 2)
    for col in frame.columns:
        if col != ROW:
            frame[col] = per_distinct(frame[col], lambda c: c.str.strip())
    return frame


def _read_jsonl(content: ImportContent) -> pd.DataFrame:
    """One record per line, read line by line into one list per column (a key missing from a
    record is ""; columns in the order their keys first appear), never the whole text."""
    columns: dict[str, list[str]] = {}
    rows: list[int] = []
    problems = Problems()
    max_columns = int(settings.IMPORT_MAX_COLUMNS)
    with text_stream(content, newline=None) as text:
        for number, raw in enumerate(text, start=1):
            line = raw.rstrip("\n")
            if not line.strip():
                continue
            try:
                obj = untrusted.json_loads(line)
            except ValueError as exc:
                # Only JSONDecodeError has .msg; other ValueErrors (a huge integer) say it in str().
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                problems.add("file", f"is not valid JSON: {reason}", row=number, value=line[:80])
                continue
            if not isinstance(obj, dict):
                problems.add(
                    "file", "must be one JSON object per line", row=number, value=line[:80]
                )
                continue
            if problems:
                continue  # the file is refused anyway; only its other unreadable lines matter
            if len(obj) > max_columns:
                problems.add(
                    "file",
                    f"has more than {max_columns} keys (IMPORT_MAX_COLUMNS)",
                    row=number,
                    value=line[:80],
                )
                continue
            record = {str(k).strip(): _cell(v).strip() for k, v in obj.items()}
            for key in record:
                if key not in columns:
                    if len(columns) >= max_columns:
                        problems.add(
                            "file",
                            f"the records name more than {max_columns} different keys "
                            "(IMPORT_MAX_COLUMNS)",
                            row=number,
                            value=key[:80],
                        )
                        break
                    columns[key] = [""] * len(rows)
            if problems:
                continue
            for key, values in columns.items():
                values.append(record.get(key, ""))
            rows.append(number)
    problems.raise_if_any("The JSON Lines file cannot be read.")
    if not rows:
        raise ApplicationError(
            "The file is empty.", errors=[FieldError(field="file", message="holds no records")]
        )
    frame = pd.DataFrame({key: pd.Series(values, dtype=object) for key, values in columns.items()})
    frame[ROW] = rows
    frame.attrs["missing_keys"] = True
    return frame
