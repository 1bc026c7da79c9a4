"""What the export and the import of the installation archive share: names and cell formats."""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from apps.core.errors import PermissionDenied

FORMAT = "pluralist-archive"
VERSION = 1
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
CONFIG_FIELDS = [
    "name",
    "kind",
    "backend",
    "model",
    "shots",
    "seeds",
    "temperature",
    "confidence_threshold",
    "min_history",
    "concurrency",
    "is_active",
    "auto",
]
PREDICTION_COLUMNS = [
    "config",
    "kind",
    "k",
    "seed",
    "reviewer",
    "idea",
    "dimension",
    "score",
    "confidence",
    "reason",
    "model",
    "backend",
    "response_mode",
    "prompt_fingerprint",
    "created_at",
]


def check_admin(actor: Any) -> None:
    if actor is not None and not getattr(actor, "is_admin", False):
        raise PermissionDenied("Only admins export or import the installation.")


def iso(value: Any) -> str:
    return "" if value is None else value.astimezone(dt.UTC).isoformat()


def csv_bytes(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    """A CSV in the import format. Cells are written as they are (the archive is read back by
    the importers, which must see the exact text); spreadsheet formula neutralisation would
    alter values, so the archive is for re-import, not for opening in a spreadsheet."""
    buf = io.StringIO()
    frame = pd.DataFrame(list(rows), columns=list(header), dtype=object)
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode("utf-8")


def json_cell(value: Any) -> str:
    return "" if value is None else json.dumps(value, sort_keys=True)


def score_cell(value: int | None) -> str:
    return "" if value is None else str(value)
