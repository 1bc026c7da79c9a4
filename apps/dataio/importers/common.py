"""Reading import files into frames of strings, and reporting problems by row and field.

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

import codecs
import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
import pandas as pd
from django.conf import settings

from apps.core import untrusted
from apps.core.errors import ApplicationError, FieldError

ROW = "_row"
# Beyond this many problems the file is clearly the wrong one; listing a million errors helps
# nobody, so the rest are summarised in one final entry.
MAX_ERRORS = 10_000

CSV_EXTENSIONS = (".csv",)
JSONL_EXTENSIONS = (".jsonl", ".ndjson")


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


# What an importer reads: the whole file, or a binary file object positioned anywhere (it is
# rewound before each read).
ImportContent = bytes | IO[bytes]

# Bytes read at a time when scanning a stream (blank check, locating a bad UTF-8 byte).
STREAM_CHUNK = 1 << 16
BOM = codecs.BOM_UTF8


def as_stream(content: ImportContent) -> IO[bytes]:
    """A seekable binary stream over `content`; bytes are wrapped without a copy (BytesIO shares
    an immutable bytes object until it is written to)."""
    return io.BytesIO(content) if isinstance(content, bytes | bytearray) else content


def is_empty(content: ImportContent) -> bool:
    stream = as_stream(content)
    stream.seek(0)
    empty = not stream.read(1)
    stream.seek(0)
    return empty


def read_all(content: ImportContent) -> bytes:
    """The whole file, for the formats parsed whole (a rubric: small, YAML or JSON)."""
    if isinstance(content, bytes):
        return content
    content.seek(0)
    return content.read()


@contextmanager
def text_stream(content: ImportContent, *, newline: str | None) -> Iterator[IO[str]]:
    """The file as UTF-8 text (BOM dropped), decoded as it is read. A byte that is not UTF-8
    raises an ApplicationError naming its byte and line (`utf8_error`). The caller's file object
    is left open (the wrapper is detached, not closed)."""
    stream = as_stream(content)
    stream.seek(0)
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline=newline)
    try:
        yield text
    except UnicodeDecodeError as exc:
        raise utf8_error(stream) from exc
    finally:
        text.detach()


def utf8_error(stream: IO[bytes]) -> ApplicationError:
    """Find the first byte that is not UTF-8 by scanning the stream again in chunks, and name
    it: its position counted after any BOM (as Python's utf-8-sig codec counts), its line and
    the 4 bytes from it."""
    stream.seek(0)
    decoder = codecs.getincrementaldecoder("utf-8")()
    first = stream.read(STREAM_CHUNK)
    bom = len(BOM) if first.startswith(BOM) else 0
    chunk, end, lines = first[bom:], len(first), 0
    while True:
        try:
            decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            # exc.object is the decoder's pending bytes plus this chunk; it ends at `end`.
            at = end - len(exc.object) + exc.start
            stream.seek(at)
            bad = stream.read(4)
            line = lines + exc.object[: exc.start].count(b"\n") + 1
            return _utf8_refusal(position=at - bom, line=line, bad=bad)
        if not chunk:
            break
        lines += chunk.count(b"\n")
        chunk = stream.read(STREAM_CHUNK)
        end += len(chunk)
    # Unreachable for a stream that raised while decoding; kept so the caller always has an error.
    return _utf8_refusal(position=0, line=1, bad=b"")


def _utf8_refusal(*, position: int, line: int, bad: bytes) -> ApplicationError:
    return ApplicationError(
        "The file is not UTF-8 text; save it as UTF-8 and import it again.",
        errors=[
            FieldError(
                field="file",
                message=f"byte {position + 1} (line {line}) is not valid UTF-8",
                row=line,
                value=repr(bad),
            )
        ],
    )


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


def per_distinct(column: pd.Series, convert: Callable[[pd.Series], pd.Series]) -> pd.Series:
    """`convert(column)`, computed once per distinct value: a ratings file repeats its reviewers,
    dimensions and ideas on a million rows, and hashing a string is cheaper than a string
    method called on it."""
    codes, distinct = pd.factorize(column, use_na_sentinel=False)
    if len(distinct) == len(column):
        return convert(column)
    converted = convert(pd.Series(distinct, name=column.name))
    return pd.Series(converted.array.take(codes), index=column.index, name=column.name)


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
