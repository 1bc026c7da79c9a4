"""What the export and the import of the installation archive share: names and cell formats."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections.abc import Sequence
from typing import Any

from apps.core.csv_export import restored_cell
from apps.core.errors import PermissionDenied

FORMAT = "pluralist-archive"
# 1: the import formats, rating history, judge files for audit; cells written as they are.
# 2: also accounts (password hashes, roles), assignments, rating sources, judge configurations,
#    runs, predictions, finals, calibrations and history; every CSV cell neutralised reversibly.
# 3: also the persona panels (documents, personas, runs, debates, turns) and the per-domain
#    routing switch (apps.dataio.services.archive.state_panels).
# 4: long files split into parts under the per-file limit (manifest `parts`: members), every
#    domain (domains.csv), the routing suggestions with their status, the findings thresholds.
VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)
RATING_COLUMNS = [
    "idea",
    "reviewer",
    "dimension",
    "score",
    "status",
    "answers",
    "rationale",
    "created_at",
    "updated_at",
]
# Archive-only column of ratings.csv (v2): the ratings importer does not know it, so the restore
# takes it off before the import and writes it back afterwards.
RATING_SOURCE_COLUMN = "source"
HISTORY_COLUMNS = [
    "idea",
    "reviewer",
    "dimension",
    "changed_at",
    "changed_by",
    "source",
    "old_status",
    "old_score",
    "old_answers",
    "old_rationale",
    "new_status",
    "new_score",
    "new_answers",
    "new_rationale",
]


def check_admin(actor: Any) -> None:
    if actor is not None and not getattr(actor, "is_admin", False):
        raise PermissionDenied("Only admins export or import the installation.")


def iso(value: Any) -> str:
    return "" if value is None else value.astimezone(dt.UTC).isoformat()


def plain_csv(
    content: bytes, *, neutralised: bool = True, drop: Sequence[str] = ()
) -> tuple[bytes, dict[str, list[str]]]:
    """An archived CSV with the neutralisation undone (archives of version 2 on), as the
    importers expect it, minus the columns in `drop`, returned apart (name -> cells in row
    order)."""
    undo = restored_cell if neutralised else str
    reader = csv.reader(io.StringIO(content.decode("utf-8-sig"), newline=""))
    header = next(reader, [])
    dropped = [i for i, name in enumerate(header) if name in drop]
    apart: dict[str, list[str]] = {header[i]: [] for i in dropped}
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    # A cell holding a bare "\r" must be quoted (apps.dataio.services.archive.members).
    quoted = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow([h for i, h in enumerate(header) if i not in dropped])
    for row in reader:
        for i in dropped:
            apart[header[i]].append(undo(row[i]) if i < len(row) else "")
        cells = [undo(c) for i, c in enumerate(row) if i not in dropped]
        (quoted if any("\r" in c for c in cells) else writer).writerow(cells)
    return buf.getvalue().encode("utf-8"), apart


def csv_records(content: bytes, *, neutralised: bool = True) -> list[dict[str, str]]:
    """The rows of an archived CSV (neutralisation undone), as dicts keyed by the header."""
    plain, _ = plain_csv(content, neutralised=neutralised)
    return list(csv.DictReader(io.StringIO(plain.decode("utf-8"), newline="")))


def jsonl_records(content: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in content.decode("utf-8").splitlines() if line.strip()]


def parse_time(text: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(text) if text else None


def json_cell(value: Any) -> str:
    return "" if value is None else json.dumps(value, sort_keys=True)


def score_cell(value: int | None) -> str:
    return "" if value is None else str(value)
