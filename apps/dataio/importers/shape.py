"""An import file's shape, bounded before or right after parsing: line length, header width,
cell length, NUL characters (limits in settings, `IMPORT_MAX_*` and `TEXT_MAX_CHARS`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from django.conf import settings

from apps.core.errors import ApplicationError, FieldError
from apps.dataio.importers.common import ROW, Problems, per_distinct
from apps.dataio.importers.streams import ImportContent, as_stream

# Bytes of the file read to find its header: IMPORT_MAX_COLUMNS names of IMPORT_MAX_COLUMN_CHARS
# characters fit many times over (4 bytes a character, quotes and commas).
HEADER_BYTES = 1 << 16
# Bytes scanned at a time for line breaks (a view over each block, no copy of the file).
LINE_SCAN_CHUNK = 1 << 22


def _shape_refusal(message: str, *, row: int, value: object = None) -> ApplicationError:
    shown = None if value is None else str(value)[:200]
    return ApplicationError(
        "The file's shape is not that of an import file; nothing was imported.",
        errors=[FieldError(field="file", message=message, row=row, value=shown)],
    )


def refuse_long_lines(content: ImportContent) -> None:
    """No line longer than IMPORT_MAX_LINE_BYTES, found before any parser reads the file.

    One pass over the bytes in blocks; the line breaks of a block are found by numpy (a
    comparison and a search in C), so 100 MB costs a fraction of a second and no copy. A record
    whose cells hold line breaks (quoted) spans several lines: each is bounded, and the cell by
    TEXT_MAX_CHARS once parsed.
    """
    limit = int(settings.IMPORT_MAX_LINE_BYTES)
    stream = as_stream(content)
    stream.seek(0)
    run = 0  # bytes of the current line read so far
    line = 1
    try:
        while chunk := stream.read(LINE_SCAN_CHUNK):
            breaks = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 0x0A)
            if breaks.size == 0:
                run += len(chunk)
                if run > limit:
                    break
                continue
            lengths = np.diff(breaks, prepend=-1) - 1
            lengths[0] += run
            over = np.flatnonzero(lengths > limit)
            if over.size:
                line += int(over[0])
                run = int(lengths[over[0]])
                break
            line += int(breaks.size)
            run = len(chunk) - int(breaks[-1]) - 1
            if run > limit:
                break
    finally:
        stream.seek(0)
    if run > limit:
        raise _shape_refusal(
            f"line {line} is longer than {limit} bytes (IMPORT_MAX_LINE_BYTES): an import file "
            "has one record per line; check that this is the right file",
            row=line,
        )


def refuse_wide_header(content: ImportContent) -> None:
    """A CSV header of at most IMPORT_MAX_COLUMNS names of at most IMPORT_MAX_COLUMN_CHARS
    characters, read from the file's first HEADER_BYTES before pandas sees it: pandas' time
    grows with the square of the columns (10,000 columns took 38 s, a million hours), and no
    import kind has more than a dozen."""
    max_columns = int(settings.IMPORT_MAX_COLUMNS)
    max_chars = int(settings.IMPORT_MAX_COLUMN_CHARS)
    stream = as_stream(content)
    stream.seek(0)
    head = stream.read(HEADER_BYTES + 1)
    stream.seek(0)
    # A character cut by the read's end, or a byte that is not UTF-8, is the parser's to name.
    text = head[:HEADER_BYTES].decode("utf-8", errors="replace").removeprefix("\ufeff")
    columns, chars, longest, quoted, started, ended = 1, 0, 0, False, False, False
    for ch in text:
        if quoted:
            if ch == '"':
                quoted = False
            else:
                chars += 1
            continue
        if ch in "\r\n":
            if started:
                ended = True
                break
            continue  # blank lines before the header are skipped, as pandas does
        started = True
        if ch == '"':
            quoted = True
        elif ch == ",":
            columns += 1
            longest, chars = max(longest, chars), 0
            if columns > max_columns:
                break
        else:
            chars += 1
    longest = max(longest, chars)
    if columns > max_columns:
        raise _shape_refusal(
            f"the header has more than {max_columns} columns (IMPORT_MAX_COLUMNS); no import "
            "kind has that many: check the delimiter (a comma) and the file",
            row=1,
        )
    if longest > max_chars:
        raise _shape_refusal(
            f"a column name in the header is longer than {max_chars} characters "
            "(IMPORT_MAX_COLUMN_CHARS)",
            row=1,
        )
    if not ended and len(head) > HEADER_BYTES:
        raise _shape_refusal(
            f"the header row does not end within its first {HEADER_BYTES} bytes", row=1
        )


def refuse_long_cells(frame: pd.DataFrame) -> None:
    """No cell longer than TEXT_MAX_CHARS (the longest abstract, claims or description the
    product stores), named by row and column; narrower columns are checked by each importer."""
    limit = int(settings.TEXT_MAX_CHARS)
    problems = Problems()
    for col in frame.columns:
        if col == ROW:
            continue
        too_long = frame[col].str.len() > limit
        if too_long.any():
            shown = frame[[ROW]].assign(value=frame[col].str.slice(0, 80) + "...")
            problems.add_rows(
                shown, too_long, col, f"is longer than {limit} characters", column="value"
            )
    problems.raise_if_any("The file has cells that are too long.")


def refuse_nul_characters(frame: pd.DataFrame) -> None:
    """PostgreSQL text cannot hold NUL (U+0000): name every cell that has one, before any query.

    A NUL is never meaningful in a title, a rationale or a key; it comes from a binary file saved
    as .csv or from a broken export, so the file is refused rather than silently cleaned.
    """
    problems = Problems()
    for col in frame.columns:
        if col == ROW:
            continue
        if "\x00" in col:
            shown_col = col.replace("\x00", "\u2400")
            problems.add("file", "a column name contains a NUL character", row=1, value=shown_col)
            continue
        has_nul = per_distinct(frame[col], lambda c: c.str.contains("\x00", regex=False))
        if not has_nul.any():
            continue
        # The value is shown with the NUL drawn as U+2400 so the error itself can be stored.
        shown = frame[[ROW]].assign(value=frame[col].str.replace("\x00", "\u2400", regex=False))
        problems.add_rows(
            shown,
            has_nul,
            col,
            "contains a NUL character (U+0000), which text cannot hold",
            column="value",
        )
    problems.raise_if_any("The file contains NUL characters.")
