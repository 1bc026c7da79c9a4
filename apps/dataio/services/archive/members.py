"""An archive's files as members of the zip: long files split into parts, every part readable.

A restore reads each member with a hard cap (IMPORT_MAX_BYTES, apps.dataio.services.archive.
bounded_zip). Until version 3 a file was one member, so an installation with about 140,000
judge predictions wrote a `judge_predictions.csv` over the cap and its own backup was refused
whole (issue 29). From version 4 on, the export splits every CSV and JSON Lines file at row
boundaries into parts of at most `part_limit()` bytes, each with the header repeated, so each
part is a file an admin can read or re-import alone:

    judge_predictions.csv, judge_predictions.part2.csv, judge_predictions.part3.csv, ...

The manifest's `parts` maps each split file's name to its members in order (a file that fits in
one member keeps its name and is not listed, as in earlier versions). A row that alone exceeds
the limit, or an archive larger than ARCHIVE_MAX_BYTES or with more members than a restore reads,
cannot be restored under the running settings: the export still writes it, and says so in its
warnings (the command prints them, the manifest keeps them).
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

from django.conf import settings

from apps.core.csv_export import reversible_cell
from apps.dataio.services.archive import bounded_zip

# Bytes handed to the compressor at a time (one call per row is slow).
WRITE_CHUNK = 1 << 20


def part_limit() -> int:
    """The most bytes one member holds: ARCHIVE_PART_BYTES, and never more than a restore under
    the same settings reads (IMPORT_MAX_BYTES)."""
    return max(1, min(int(settings.ARCHIVE_PART_BYTES), int(settings.IMPORT_MAX_BYTES)))


def part_name(name: str, number: int) -> str:
    """`judge_predictions.csv`, part 2 -> `judge_predictions.part2.csv` (part 1 keeps the name)."""
    if number == 1:
        return name
    stem, dot, ext = name.rpartition(".")
    return f"{stem}.part{number}.{ext}" if dot else f"{name}.part{number}"


class _Line:
    """csv.writer wants a file; this one hands each formatted row straight back."""

    def write(self, value: str) -> str:
        return value


class ArchiveWriter:
    """Writes the archive's files into a zip stream, splitting long ones (module docstring)."""

    def __init__(self, out: IO[bytes]) -> None:
        self.zip = zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True)
        self.limit = part_limit()
        self.parts: dict[str, list[str]] = {}
        self.total = 0
        self.members = 0
        self.warnings: list[str] = []
        self._csv = csv.writer(_Line(), lineterminator="\n")
        self._csv_quoted = csv.writer(_Line(), lineterminator="\n", quoting=csv.QUOTE_ALL)

    def write(self, name: str, data: bytes) -> None:
        """A file written whole (a rubric, the manifest)."""
        if len(data) > self.limit:
            self.warnings.append(
                f"{name} is {len(data)} bytes, more than a restore reads in one file "
                f"({self.limit}, IMPORT_MAX_BYTES / ARCHIVE_PART_BYTES): this archive cannot be "
                "restored under these settings"
            )
        self.zip.writestr(name, data)
        self.total += len(data)
        self.members += 1

    def write_csv(self, name: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """A CSV in the import format, every cell neutralised reversibly against formula
        injection (apps.core.csv_export.reversible_cell), split into parts."""
        head = str(self._csv.writerow(header)).encode("utf-8")
        lines = (self._row([reversible_cell(v) for v in row]) for row in rows)
        self._write_lines(name, head, lines)

    def _row(self, cells: list[str]) -> bytes:
        """One CSV line. With a "\n" line end, Python's csv module leaves a cell holding a bare
        "\r" unquoted, and every reader then ends the row there (issue 29): such rows are written
        with every cell quoted."""
        writer = self._csv_quoted if any("\r" in c for c in cells) else self._csv
        return str(writer.writerow(cells)).encode("utf-8")

    def write_jsonl(self, name: str, rows: Iterable[dict[str, Any]]) -> None:
        self._write_lines(
            name,
            b"",
            ((json.dumps(r, sort_keys=True, default=str) + "\n").encode("utf-8") for r in rows),
        )

    def _write_lines(self, name: str, head: bytes, lines: Iterable[bytes]) -> None:
        members = [name]
        handle = self.zip.open(name, "w", force_zip64=True)
        buffer: list[bytes] = [head]
        buffered = size = len(head)
        rows_in_part = 0
        for number, line in enumerate(lines, start=1):
            if rows_in_part and size + len(line) > self.limit:
                handle.write(b"".join(buffer))
                handle.close()
                members.append(part_name(name, len(members) + 1))
                handle = self.zip.open(members[-1], "w", force_zip64=True)
                buffer, buffered, size, rows_in_part = [head], len(head), len(head), 0
            if len(head) + len(line) > self.limit:
                self.warnings.append(
                    f"{name}: row {number} alone is {len(line)} bytes, more than a restore "
                    f"reads in one file ({self.limit}, IMPORT_MAX_BYTES / ARCHIVE_PART_BYTES): "
                    "this archive cannot be restored under these settings"
                )
            buffer.append(line)
            buffered += len(line)
            size += len(line)
            self.total += len(line)
            rows_in_part += 1
            if buffered >= WRITE_CHUNK:
                handle.write(b"".join(buffer))
                buffer, buffered = [], 0
        handle.write(b"".join(buffer))
        handle.close()
        self.total += len(head) * len(members)
        self.members += len(members)
        if len(members) > 1:
            self.parts[name] = members

    def close(self, manifest: dict[str, Any]) -> None:
        """Write the manifest (with `parts` and the warnings) and finish the zip."""
        if self.members + 1 > bounded_zip.MAX_MEMBERS:
            self.warnings.append(
                f"the archive holds {self.members + 1} files, more than a restore reads "
                f"({bounded_zip.MAX_MEMBERS}): raise ARCHIVE_PART_BYTES"
            )
        if self.total > int(settings.ARCHIVE_MAX_BYTES):
            self.warnings.append(
                f"the archive unpacks to {self.total} bytes, more than a restore reads "
                f"({settings.ARCHIVE_MAX_BYTES}, ARCHIVE_MAX_BYTES): raise it before restoring"
            )
        manifest = {**manifest, "parts": self.parts, "warnings": self.warnings}
        self.zip.writestr(bounded_zip.MANIFEST, json.dumps(manifest, indent=2))
        self.zip.close()


class ArchiveFiles:
    """The files a manifest lists, read from the zip on demand, each part within bounds.

    `files[name]` is a whole file (its parts joined, the header kept once); `records(name)`
    streams a CSV's rows part by part (neutralisation undone), so a long file is never held."""

    def __init__(self, archive: zipfile.ZipFile, manifest: dict[str, Any]) -> None:
        self.archive = archive
        self.manifest = manifest
        self.neutralised = bool(manifest.get("neutralised"))

    def members(self, name: str) -> list[str]:
        return list(self.manifest.get("parts", {}).get(name) or [name])

    def __getitem__(self, name: str) -> bytes:
        pieces = []
        for number, member in enumerate(self.members(name)):
            data = bounded_zip.read_member(self.archive, member)
            if number and name.endswith(".csv"):
                data = data.split(b"\n", 1)[1] if b"\n" in data else b""
            pieces.append(data)
        return b"".join(pieces)

    def records(self, name: str) -> Iterator[dict[str, str]]:
        """A CSV's rows as dicts keyed by its header, part after part."""
        undo = self.neutralised
        for member in self.members(name):
            with (
                bounded_zip.open_member(self.archive, member) as stream,
                io.TextIOWrapper(stream, encoding="utf-8-sig", newline="") as text,
            ):
                reader = csv.reader(text)
                header = next(reader, [])
                width = len(header)
                for row in reader:
                    if len(row) != width:
                        row = [*row[:width], *[""] * (width - len(row))]
                    if undo:  # restored_cell, inlined: millions of cells
                        row = [c[1:] if c[:1] == "'" else c for c in row]
                    yield dict(zip(header, row, strict=True))

    def lines(self, name: str) -> Iterator[dict[str, Any]]:
        """A JSON Lines file's objects, part after part."""
        for member in self.members(name):
            text = bounded_zip.read_member(self.archive, member).decode("utf-8")
            for line in text.splitlines():
                if line.strip():
                    yield json.loads(line)
