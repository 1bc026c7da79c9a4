"""The judges' files of the archive read back (judge_files.py says what each holds): every
column is read by its name, by the reader READ_AS gives it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from django.core.management.color import no_style
from django.db import connection

from apps.dataio.importers import ImportResult
from apps.dataio.services.archive.common import jsonl_records, parse_time
from apps.dataio.services.archive.judge_files import (
    CONFIG_FIELDS_ADDED,
    FINAL_COLUMNS,
    PREDICTION_COLUMNS,
    RUN_FIELDS,
    RUN_TIMES,
    SIGNAL_COLUMNS,
)
from apps.dataio.services.archive.members import ArchiveFiles
from apps.dataio.services.archive.rows import INTERRUPTED, Keys, insert_rows
from apps.judges.models import (
    JudgeCalibration,
    JudgeConfig,
    JudgeFinal,
    JudgeHistory,
    JudgePrediction,
    JudgeRun,
)
from apps.judges.services.configs import CONFIG_FIELDS
from apps.screening.models import Rating


def judges_restore(files: ArchiveFiles) -> list[ImportResult]:
    """Configurations, runs (ids kept), predictions, finals, calibrations and history; the
    predictions and finals stream part by part (apps.dataio.services.archive.members)."""
    results = [_configs_restore(files["judge_configs.jsonl"])]
    keys = Keys()
    results.append(_runs_restore(files["judge_runs.jsonl"], keys))
    results.append(_rows_restore("judge_predictions.csv", files, keys))
    results.append(_rows_restore("judge_finals.csv", files, keys))
    results.append(_calibrations_restore(files["judge_calibrations.jsonl"], keys))
    results.append(_history_restore(files["judge_history.jsonl"], keys))
    keys.raise_if_any()
    return results


def _configs_restore(content: bytes) -> ImportResult:
    records = jsonl_records(content)
    result = ImportResult(kind="judge configurations", rows=len(records))
    # Defaults made on first use in this installation give way to the archived ones.
    JudgeConfig.objects.filter(name__in=[r["name"] for r in records]).delete()
    result.created = insert_rows(
        JudgeConfig,
        [*CONFIG_FIELDS, "created_at", "updated_at"],
        (
            (
                *(
                    r[f] if f in r or f not in CONFIG_FIELDS_ADDED else CONFIG_FIELDS_ADDED[f]
                    for f in CONFIG_FIELDS
                ),
                parse_time(r["created_at"]),
                parse_time(r["updated_at"]),
            )
            for r in records
        ),
    )
    return result


def _runs_restore(content: bytes, keys: Keys) -> ImportResult:
    records = jsonl_records(content)
    result = ImportResult(kind="judge runs", rows=len(records))
    name = "judge_runs.jsonl"
    rows, links, interrupted = [], [], 0
    for n, r in enumerate(records, start=1):
        domain = keys.domains.get(r["domain"])
        if domain is None:
            keys.miss(name, "domain", n, r["domain"], "is not a domain of the archive")
            continue
        status, error, finished = r["status"], r["error"], parse_time(r["finished_at"])
        if status in JudgeRun.ACTIVE:
            status, error = JudgeRun.Status.CANCELLED, INTERRUPTED
            finished = parse_time(r["updated_at"])
            interrupted += 1
        values = {
            **{f: r[f] for f in RUN_FIELDS if f in r},
            **{t: parse_time(r[t]) for t in RUN_TIMES},
            "status": status,
            "error": error,
            "finished_at": finished,
            "estimated_cost": r["estimated_cost"],
            "domain": domain,
            "reviewer": keys.user(name, "reviewer", n, r["reviewer"] or "", required=False),
            "requested_by": keys.user(
                name, "requested_by", n, r["requested_by"] or "", required=False
            ),
        }
        rows.append(values)
        for config in r["configs"]:
            if config in keys.configs:
                links.append((r["id"], keys.configs[config]))
            else:
                keys.miss(name, "configs", n, config, "is not in judge_configs.jsonl")
    if rows:
        columns = list(rows[0])
        result.created = insert_rows(JudgeRun, columns, ([v[c] for c in columns] for v in rows))
        insert_rows(JudgeRun.configs.through, ["judgerun", "judgeconfig"], links)
        with connection.cursor() as cur:
            for sql in connection.ops.sequence_reset_sql(no_style(), [JudgeRun]):
                cur.execute(sql)
    if interrupted:
        result.notes.append(f"{interrupted} unfinished runs came back cancelled ({INTERRUPTED})")
    return result


def _optional_int(text: str) -> int | None:
    return int(text) if text != "" else None


# How each column of judge_predictions.csv and judge_finals.csv is read back, by name; a column
# not named here is text. The target (reviewer, idea, dimension), the configuration and the
# few-shot examples are natural keys, resolved in `_target_row`.
READ_AS: dict[str, Callable[[str], Any]] = {
    **dict.fromkeys(
        [
            "run",
            "k",
            "seed",
            "prompt_tokens",
            "completion_tokens",
            "cached_tokens",
            "latency_ms",
            "attempts",
            "kept",
            "discarded",
            "failed",
        ],
        int,
    ),
    **dict.fromkeys(["score", "confidence", "raw_confidence", "level_score"], _optional_int),
    "panel_size": lambda text: int(text or 0),
    "created_at": parse_time,
}
# An archive older than the signal columns (SIGNAL_COLUMNS) restores "" / 0 / empty.
SIGNAL_DEFAULTS = dict.fromkeys(SIGNAL_COLUMNS, "")
TARGET = ("reviewer", "idea", "dimension")
# The stored field of a column whose name differs (a prediction's examples are rating ids).
FIELD_OF = {"example_ratings": "example_rating_ids"}
PREDICTION_FIELDS = [FIELD_OF.get(c, c) for c in PREDICTION_COLUMNS]
FINAL_FIELDS = [FIELD_OF.get(c, c) for c in FINAL_COLUMNS]


def _target(keys: Keys, name: str, n: int, r: dict[str, str]) -> tuple[Any, Any, Any] | None:
    reviewer = keys.user(name, "reviewer", n, r["reviewer"])
    idea = keys.idea(name, n, r["idea"])
    dim = keys.dimension(name, n, idea, r["dimension"]) if idea else None
    if reviewer is None or idea is None or dim is None:
        return None
    return reviewer, idea.id, dim


def _target_row(
    name: str,
    columns: list[str],
    keys: Keys,
    n: int,
    r: dict[str, str],
    ratings: dict[tuple[str, ...], int],
) -> dict[str, Any] | None:
    """One prediction or final: every column of the file read by its name (READ_AS)."""
    target = _target(keys, name, n, r)
    if target is None:
        return None
    r = {**SIGNAL_DEFAULTS, **r}
    row: dict[str, Any] = dict(zip(TARGET, target, strict=True))
    for column in columns:
        if column in TARGET:
            continue
        if column == "config":
            row["config"] = keys.configs.get(r["config"])
        elif column == "example_ratings":
            named = json.loads(r["example_ratings"] or "[]")
            row[FIELD_OF[column]] = [ratings[tuple(e)] for e in named if tuple(e) in ratings]
        else:
            row[column] = READ_AS.get(column, str)(r[column])
    return row


def _rows_restore(
    name: str,
    files: ArchiveFiles,
    keys: Keys,
) -> ImportResult:
    """A predictions or finals file, streamed from the archive straight into the table."""
    result = ImportResult(kind=name.split(".")[0].replace("_", " "))
    ratings = (
        {
            tuple(key): rid
            for *key, rid in Rating.objects.values_list(
                "idea__external_id", "reviewer__username", "dimension__key", "id"
            ).iterator(chunk_size=5000)
        }
        if name == "judge_predictions.csv"
        else {}
    )
    model = JudgePrediction if name == "judge_predictions.csv" else JudgeFinal
    columns, fields = (
        (PREDICTION_COLUMNS, PREDICTION_FIELDS)
        if model is JudgePrediction
        else (FINAL_COLUMNS, FINAL_FIELDS)
    )

    def rows() -> Iterator[list[Any]]:
        for n, r in enumerate(files.records(name), start=2):
            result.rows += 1
            row = _target_row(name, columns, keys, n, r, ratings)
            if row is not None:
                yield [row[f] for f in fields]

    result.created = insert_rows(model, fields, rows())
    keys.raise_if_any()
    return result


def _calibrations_restore(content: bytes, keys: Keys) -> ImportResult:
    records = jsonl_records(content)
    result = ImportResult(kind="judge calibrations", rows=len(records))
    result.created = insert_rows(
        JudgeCalibration,
        ["domain", "dimension", "kind", "backend", "fit", "n", "run", "updated_at"],
        (
            (
                keys.domains[r["domain__key"]],
                r["dimension"],
                r["kind"],
                r["backend"],
                r["fit"],
                r["n"],
                r["run_id"],
                parse_time(r["updated_at"]),
            )
            for r in records
            if r["domain__key"] in keys.domains
        ),
    )
    return result


def _history_restore(content: bytes, keys: Keys) -> ImportResult:
    records = jsonl_records(content)
    result = ImportResult(kind="judge history", rows=len(records))
    result.created = insert_rows(
        JudgeHistory,
        ["event", "run", "config", "changed_by", "changed_at", "old_value", "new_value", "note"],
        (
            (
                r["event"],
                r["run_id"],
                keys.configs.get(r["config__name"] or ""),
                keys.users.get(r["changed_by__username"] or ""),
                parse_time(r["changed_at"]),
                r["old_value"],
                r["new_value"],
                r["note"],
            )
            for r in records
        ),
    )
    return result
