"""What an installation needs to carry on working beyond the import formats (archive version 2).

Accounts with their password hashes and roles, assignments (pending ones included), the `source`
of each rating, and the judges: configurations, runs, per-seed predictions, finals,
calibrations and their history. Every row is keyed by natural keys (usernames, external ids,
domain and dimension keys, configuration names), except judge runs, which keep their id: pages,
snapshots ("run-<id>") and finals name runs by id, and a restore goes into an installation that
has none.

Rows are written with raw INSERTs: the ORM would overwrite `auto_now` / `auto_now_add` times with
"now", and a restore must bring the original times back.

Not carried: API tokens and sessions (credentials: clients sign in again and make new tokens),
login-attempt logs, invitations (a record of mails sent), and what is derived and recomputed
after the restore: judge run plans and chunks (an unfinished run comes back cancelled, with a
note: start it again), item vectors (recomputed by the next run), metric and alignment
snapshots (queued for recompute by `snapshots_recompute`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, cast

from django.core.management.color import no_style
from django.db import DEFAULT_DB_ALIAS, connection, connections, models, transaction

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.core.errors import ApplicationError, FieldError
from apps.dataio.importers import ImportResult
from apps.dataio.services.archive.common import csv_records, iso, jsonl_records, parse_time
from apps.dataio.services.archive.members import ArchiveFiles, ArchiveWriter
from apps.decisions.services import decisions_mark_stale
from apps.disagreement.services import metrics_mark_stale
from apps.findings.models import FindingSnapshot
from apps.findings.services import findings_mark_stale
from apps.judges.models import (
    JudgeCalibration,
    JudgeConfig,
    JudgeFinal,
    JudgeHistory,
    JudgePrediction,
    JudgeRun,
)
from apps.judges.services import judge_shortlists_rebuild
from apps.judges.services.alignment import alignment_runs_finished
from apps.judges.services.dispatch import send_item_parts_measure
from apps.screening.models import Assignment, Dimension, Rating, Rubric

ACCOUNT_COLUMNS = [
    "username",
    "email",
    "first_name",
    "last_name",
    "role",
    "is_active",
    "is_staff",
    "is_superuser",
    "password",
    "date_joined",
    "last_login",
]
ASSIGNMENT_COLUMNS = [
    "reviewer",
    "idea",
    "status",
    "assigned_by",
    "decline_reason",
    "created_at",
    "updated_at",
]
CONFIG_FIELDS = [
    "name",
    "kind",
    "backend",
    "model",
    "base_url",
    "shots",
    "seeds",
    "temperature",
    "confidence_threshold",
    "min_history",
    "concurrency",
    "is_active",
    "auto",
    "panel_evidence",
]
# Configuration fields added after archives were first written, with the value an older
# archive's configurations had.
CONFIG_FIELDS_ADDED = {"panel_evidence": False}
RUN_FIELDS = [
    "id",
    "purpose",
    "status",
    "dimensions",
    "shots",
    "seeds",
    "min_history",
    "backend",
    "scope_key",
    "rerun_requested",
    "total",
    "done",
    "failed",
    "calls",
    "tokens_in",
    "tokens_out",
    "tokens_cached",
    "error",
    "signals",
]
# Which signal a prediction came from (issue 17): appended, so older archives' columns keep their
# positions; an archive without them restores "" / 0 / empty.
SIGNAL_COLUMNS = ["signal", "panel_size", "level_score"]
RUN_TIMES = ["started_at", "finished_at", "heartbeat_at", "created_at", "updated_at"]
PREDICTION_COLUMNS = [
    "run",
    "config",
    "kind",
    "k",
    "seed",
    "reviewer",
    "idea",
    "dimension",
    "score",
    "confidence",
    "raw_confidence",
    "reason",
    "model",
    "backend",
    "response_mode",
    "prompt_fingerprint",
    "example_ratings",
    "raw_reply",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "latency_ms",
    "attempts",
    "error",
    "created_at",
    *SIGNAL_COLUMNS,
]
FINAL_COLUMNS = [
    "run",
    "kind",
    "k",
    "reviewer",
    "idea",
    "dimension",
    "score",
    "confidence",
    "reason",
    "kept",
    "discarded",
    "failed",
    "created_at",
    *SIGNAL_COLUMNS,
]
STATE_FILES = [
    "accounts.csv",
    "assignments.csv",
    "judge_configs.jsonl",
    "judge_runs.jsonl",
    "judge_predictions.csv",
    "judge_finals.csv",
    "judge_calibrations.jsonl",
    "judge_history.jsonl",
]
ACCOUNT_FLAGS = {"is_active", "is_staff", "is_superuser"}
ACCOUNT_TIMES = {"date_joined", "last_login"}
INTERRUPTED = "Interrupted by the backup: the restore brings back no work plan; start it again."


def _flag(value: Any) -> str:
    return "true" if value else "false"


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def _int(text: str) -> int | None:
    return int(text) if text != "" else None


# --------------------------------------------------------------------------- export


def state_write(writer: ArchiveWriter) -> None:
    """The version-2 files (module docstring), written into the archive."""
    users = dict(User.objects.values_list("id", "username"))
    ratings = {
        rid: [idea, reviewer, dim]
        for rid, idea, reviewer, dim in Rating.objects.values_list(
            "id", "idea__external_id", "reviewer__username", "dimension__key"
        ).iterator(chunk_size=5000)
    }
    writer.write_csv(
        "accounts.csv",
        ACCOUNT_COLUMNS,
        (
            [
                _flag(r[c])
                if c in ACCOUNT_FLAGS
                else iso(r[c])
                if c in ACCOUNT_TIMES
                else _cell(r[c])
                for c in ACCOUNT_COLUMNS
            ]
            for r in User.objects.order_by("username").values(*ACCOUNT_COLUMNS)
        ),
    )
    writer.write_csv(
        "assignments.csv",
        ASSIGNMENT_COLUMNS,
        (
            [
                r["reviewer__username"],
                r["idea__external_id"],
                r["status"],
                users.get(r["assigned_by_id"], ""),
                r["decline_reason"],
                iso(r["created_at"]),
                iso(r["updated_at"]),
            ]
            for r in Assignment.objects.order_by("reviewer__username", "idea__external_id")
            .values(
                "reviewer__username",
                "idea__external_id",
                "status",
                "assigned_by_id",
                "decline_reason",
                "created_at",
                "updated_at",
            )
            .iterator(chunk_size=5000)
        ),
    )
    writer.write_jsonl(
        "judge_configs.jsonl",
        (
            {**row, "created_at": iso(row["created_at"]), "updated_at": iso(row["updated_at"])}
            for row in JudgeConfig.objects.order_by("name").values(
                *CONFIG_FIELDS, "created_at", "updated_at"
            )
        ),
    )
    writer.write_jsonl("judge_runs.jsonl", _runs(users))
    writer.write_csv("judge_predictions.csv", PREDICTION_COLUMNS, _predictions(ratings))
    writer.write_csv(
        "judge_finals.csv",
        FINAL_COLUMNS,
        _target_rows(JudgeFinal.objects.order_by("id"), FINAL_COLUMNS),
    )
    writer.write_jsonl(
        "judge_calibrations.jsonl",
        (
            {**row, "updated_at": iso(row["updated_at"])}
            for row in JudgeCalibration.objects.order_by("id").values(
                "domain__key", "dimension", "kind", "backend", "fit", "n", "run_id", "updated_at"
            )
        ),
    )
    writer.write_jsonl(
        "judge_history.jsonl",
        (
            {**row, "changed_at": iso(row["changed_at"])}
            for row in JudgeHistory.objects.order_by("changed_at", "id").values(
                "event",
                "run_id",
                "config__name",
                "changed_by__username",
                "changed_at",
                "old_value",
                "new_value",
                "note",
            )
        ),
    )


def findings_thresholds() -> list[float]:
    """The thresholds the installation computed findings at (the setting's and any a manager
    asked for), so a restore recomputes every one of them, not the default alone."""
    return sorted(
        set(
            FindingSnapshot.objects.filter(status=FindingSnapshot.Status.DONE).values_list(
                "threshold", flat=True
            )
        )
    )


def _runs(users: dict[int, str]) -> Iterator[dict[str, Any]]:
    configs = dict(JudgeConfig.objects.values_list("id", "name"))
    names: dict[int, list[str]] = {}
    for run_id, config_id in JudgeRun.configs.through.objects.values_list(
        "judgerun_id", "judgeconfig_id"
    ):
        names.setdefault(run_id, []).append(configs[config_id])
    for run in JudgeRun.objects.select_related("domain").order_by("id"):
        yield {
            **{f: getattr(run, f) for f in RUN_FIELDS},
            **{t: iso(getattr(run, t)) for t in RUN_TIMES},
            "estimated_cost": str(run.estimated_cost),
            "domain": run.domain.key,
            "reviewer": users.get(run.reviewer_id) if run.reviewer_id else None,
            "requested_by": users.get(run.requested_by_id) if run.requested_by_id else None,
            "configs": sorted(names.get(run.id, [])),
        }


# The prediction and final files' columns that are not fields of the same name.
TARGET_SOURCES = {
    "run": "run_id",
    "config": "config__name",
    "reviewer": "reviewer__username",
    "idea": "idea__external_id",
    "dimension": "dimension__key",
    "example_ratings": "example_rating_ids",
}


def _target_rows(queryset: Any, columns: Sequence[str]) -> Iterator[list[Any]]:
    """Rows of predictions or finals, each column read by name (TARGET_SOURCES)."""
    lookups = [TARGET_SOURCES.get(c, c) for c in columns]
    for row in queryset.values(*lookups).iterator(chunk_size=5000):
        yield [
            iso(row[lookup]) if c == "created_at" else _cell(row[lookup])
            for c, lookup in zip(columns, lookups, strict=True)
        ]


def _predictions(ratings: dict[int, list[str]]) -> Iterator[list[Any]]:
    """Predictions name their few-shot examples by rating key ([idea, reviewer, dimension])."""
    at = PREDICTION_COLUMNS.index("example_ratings")
    for row in _target_rows(JudgePrediction.objects.order_by("id"), PREDICTION_COLUMNS):
        ids = json.loads(row[at]) if row[at] else []
        row[at] = json.dumps([ratings[i] for i in ids if i in ratings])
        yield row


# --------------------------------------------------------------------------- restore


# Values of these fields are written as they are: psycopg adapts Python's str, int, float, bool,
# Decimal and aware datetimes itself, and Django's own conversion of each (about 30 calls per
# row through the connection proxy) was most of a restore's time (issue 29).
_AS_THEY_ARE = (
    models.CharField,
    models.TextField,
    models.IntegerField,
    models.BooleanField,
    models.FloatField,
    models.DateTimeField,
    models.ForeignKey,
)
# Tables made only of these columns are COPYed with their types told once (below); a float or
# a boolean read from JSON may come as an int, which psycopg then adapts by value instead.
_TYPED = (
    models.CharField,
    models.TextField,
    models.IntegerField,
    models.DateTimeField,
    models.ForeignKey,
    models.JSONField,
)


def insert_rows(
    model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """Write rows as given (times included), converting each value as the ORM would.

    On PostgreSQL the rows stream through one COPY (a restore writes 100,000 predictions in
    seconds, holding none of them); `rows` must not query the database while it is consumed.
    Elsewhere (SQLite, the local settings) they are INSERTed in batches."""
    fields = [cast(models.Field, model._meta.get_field(c)) for c in columns]
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(str(f.column)) for f in fields)
    real = connections[DEFAULT_DB_ALIAS]
    n = 0
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            converted = [
                i
                for i, f in enumerate(fields)
                if not isinstance(f, _AS_THEY_ARE) or isinstance(f, models.JSONField)
            ]
            prep = {i: fields[i].get_db_prep_save for i in converted}
            types = cur.cursor.connection.adapters.types
            oids = [types.get(str(f.db_type(connection)).split("(")[0]) for f in fields]
            typed = all(oids) and all(isinstance(f, _TYPED) for f in fields)
            with cur.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                if typed:
                    # Every column's type told once: no per-value lookup of how to write it.
                    copy.set_types([info.oid for info in oids if info])
                for row in rows:
                    values = list(row)
                    for i in converted:
                        values[i] = prep[i](values[i], real)
                    copy.write_row(values)
                    n += 1
            return n
        sql = f"INSERT INTO {table} ({names}) VALUES ({', '.join(['%s'] * len(fields))})"
        every = [f.get_db_prep_save for f in fields]
        batch: list[list[Any]] = []
        for row in rows:
            batch.append([p(v, real) for p, v in zip(every, row, strict=True)])
            if len(batch) >= 5000:
                cur.executemany(sql, batch)
                n, batch = n + len(batch), []
        if batch:
            cur.executemany(sql, batch)
            n += len(batch)
    return n


class Keys:
    """Natural keys of the restored installation -> ids, with an error list naming the file."""

    def __init__(self) -> None:
        self.users = dict(User.objects.values_list("username", "id"))
        # A domain without its own rubric is rated on the default rubric.
        default = Rubric.objects.filter(is_default=True).values_list("id", flat=True).first()
        self.ideas = {
            ext: (idea_id, rubric_id or default)
            for ext, idea_id, rubric_id in Idea.objects.values_list(
                "external_id", "id", "patent__domain__rubric_id"
            )
        }
        self.dims: dict[tuple[int | None, str], int] = {
            (rubric_id, key): dim_id
            for rubric_id, key, dim_id in Dimension.objects.values_list("rubric_id", "key", "id")
        }
        self.domains = dict(Domain.objects.values_list("key", "id"))
        self.configs = dict(JudgeConfig.objects.values_list("name", "id"))
        self.errors: list[FieldError] = []

    def miss(self, name: str, column: str, row: int, value: str, what: str) -> None:
        if len(self.errors) < 50:
            self.errors.append(
                FieldError(field=f"{name}: {column}", message=what, row=row, value=value)
            )

    def user(self, name: str, column: str, row: int, value: str, *, required: bool = True) -> Any:
        if not value and not required:
            return None
        found = self.users.get(value)
        if found is None:
            self.miss(name, column, row, value, "names an account that is not in accounts.csv")
        return found

    def idea(self, name: str, row: int, value: str) -> tuple[int, int | None] | None:
        found = self.ideas.get(value)
        if found is None:
            self.miss(name, "idea", row, value, "names an idea that is not in ideas.csv")
        return found

    def dimension(self, name: str, row: int, idea: tuple[int, int | None], key: str) -> Any:
        found = self.dims.get((idea[1], key))
        if found is None:
            self.miss(name, "dimension", row, key, "is not a dimension of the idea's rubric")
        return found

    def raise_if_any(self) -> None:
        if self.errors:
            raise ApplicationError(
                f"{self.errors[0].field.split(':')[0]} has errors; nothing was imported.",
                errors=self.errors,
            )


def accounts_restore(content: bytes) -> ImportResult:
    """Every account with its password hash, role and flags; an account that already exists
    here (the admin who restores, say) is kept as it is."""
    records = csv_records(content)
    result = ImportResult(kind="accounts", rows=len(records))
    existing = set(User.objects.values_list("username", flat=True))
    new = [r for r in records if r["username"] not in existing]
    result.created = insert_rows(
        User,
        [*ACCOUNT_COLUMNS],
        (
            [
                r[c] == "true"
                if c in ACCOUNT_FLAGS
                else parse_time(r[c])
                if c in ACCOUNT_TIMES
                else r[c]
                for c in ACCOUNT_COLUMNS
            ]
            for r in new
        ),
    )
    if len(new) < len(records):
        result.notes.append(
            f"{len(records) - len(new)} accounts already here were kept as they are."
        )
    return result


def domains_restore(content: bytes) -> ImportResult:
    """Every domain with its name (version 4), before the rubrics and patents: a domain without
    patents came back with none before; one already here is kept as it is. Rubrics attach
    themselves to their domains when their files are imported."""
    records = csv_records(content)
    result = ImportResult(kind="domains", rows=len(records))
    existing = set(Domain.objects.values_list("key", flat=True))
    new = [(r["key"], r["name"]) for r in records if r["key"] not in existing]
    result.created = insert_rows(Domain, ["key", "name"], new)
    return result


def rating_sources_restore(sources: list[str], plain_ratings: bytes) -> None:
    """Give each restored rating the source its archive row names (the import wrote "import")."""
    records = csv_records(plain_ratings, neutralised=False)
    ids = {
        (idea, reviewer, dim): rid
        for idea, reviewer, dim, rid in Rating.objects.values_list(
            "idea__external_id", "reviewer__username", "dimension__key", "id"
        ).iterator(chunk_size=5000)
    }
    by_source: dict[str, list[int]] = {}
    for rec, source in zip(records, sources, strict=True):
        rid = ids.get((rec["idea"], rec["reviewer"], rec["dimension"]))
        if rid is not None and source and source != Rating.Source.IMPORT:
            by_source.setdefault(source, []).append(rid)
    for source, rating_ids in by_source.items():
        for start in range(0, len(rating_ids), 10000):
            Rating.objects.filter(id__in=rating_ids[start : start + 10000]).update(source=source)


def assignments_restore(content: bytes) -> ImportResult:
    """The archived assignments replace those the ratings import settled."""
    records = csv_records(content)
    result = ImportResult(kind="assignments", rows=len(records))
    keys = Keys()
    name = "assignments.csv"
    rows = []
    for n, r in enumerate(records, start=2):
        reviewer = keys.user(name, "reviewer", n, r["reviewer"])
        idea = keys.idea(name, n, r["idea"])
        by = keys.user(name, "assigned_by", n, r["assigned_by"], required=False)
        if reviewer is None or idea is None:
            continue
        rows.append(
            (
                reviewer,
                idea[0],
                r["status"],
                by,
                r["decline_reason"],
                parse_time(r["created_at"]),
                parse_time(r["updated_at"]),
            )
        )
    keys.raise_if_any()
    Assignment.objects.all().delete()
    result.created = insert_rows(
        Assignment,
        ["reviewer", "idea", "status", "assigned_by", "decline_reason", "created_at", "updated_at"],
        rows,
    )
    return result


def judges_restore(files: ArchiveFiles) -> list[ImportResult]:
    """Configurations, runs (ids kept), predictions, finals, calibrations and history; the
    predictions and finals stream part by part (apps.dataio.services.archive.members)."""
    results = [_configs_restore(files["judge_configs.jsonl"])]
    keys = Keys()
    results.append(_runs_restore(files["judge_runs.jsonl"], keys))
    results.append(_rows_restore("judge_predictions.csv", files, keys, _prediction_row))
    results.append(_rows_restore("judge_finals.csv", files, keys, _final_row))
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


def _target(keys: Keys, name: str, n: int, r: dict[str, str]) -> tuple[Any, Any, Any] | None:
    reviewer = keys.user(name, "reviewer", n, r["reviewer"])
    idea = keys.idea(name, n, r["idea"])
    dim = keys.dimension(name, n, idea, r["dimension"]) if idea else None
    if reviewer is None or idea is None or dim is None:
        return None
    return reviewer, idea[0], dim


# Stored fields of a prediction that the file names differently.
PREDICTION_FIELD_OF = {"example_ratings": "example_rating_ids"}
PREDICTION_FIELDS = [PREDICTION_FIELD_OF.get(c, c) for c in PREDICTION_COLUMNS]
FINAL_FIELDS = FINAL_COLUMNS
PREDICTION_COUNTERS = ["prompt_tokens", "completion_tokens", "cached_tokens", "latency_ms"]
PREDICTION_TEXTS = ["reason", "model", "backend", "response_mode", "prompt_fingerprint"]


def _prediction_row(
    keys: Keys, n: int, r: dict[str, str], ratings: dict[tuple[str, ...], int]
) -> dict[str, Any] | None:
    target = _target(keys, "judge_predictions.csv", n, r)
    if target is None:
        return None
    named = json.loads(r["example_ratings"] or "[]")
    return {
        "run": int(r["run"]),
        "config": keys.configs.get(r["config"]),
        "kind": r["kind"],
        "k": int(r["k"]),
        "seed": int(r["seed"]),
        **dict(zip(("reviewer", "idea", "dimension"), target, strict=True)),
        **{c: _int(r[c]) for c in ("score", "confidence", "raw_confidence")},
        **{c: r[c] for c in PREDICTION_TEXTS},
        "example_rating_ids": [ratings[tuple(e)] for e in named if tuple(e) in ratings],
        "raw_reply": r["raw_reply"],
        **{c: int(r[c]) for c in [*PREDICTION_COUNTERS, "attempts"]},
        "error": r["error"],
        "created_at": parse_time(r["created_at"]),
        **_signal_values(r),
    }


def _signal_values(r: dict[str, str]) -> dict[str, Any]:
    """An archive older than the signal columns restores "" / 0 / empty."""
    return {
        "signal": r.get("signal", ""),
        "panel_size": int(r.get("panel_size") or 0),
        "level_score": _int(r.get("level_score", "")),
    }


def _final_row(
    keys: Keys, n: int, r: dict[str, str], ratings: dict[tuple[str, ...], int]
) -> dict[str, Any] | None:
    target = _target(keys, "judge_finals.csv", n, r)
    if target is None:
        return None
    return {
        "run": int(r["run"]),
        "kind": r["kind"],
        "k": int(r["k"]),
        **dict(zip(("reviewer", "idea", "dimension"), target, strict=True)),
        "score": _int(r["score"]),
        "confidence": _int(r["confidence"]),
        "reason": r["reason"],
        **{c: int(r[c]) for c in ("kept", "discarded", "failed")},
        "created_at": parse_time(r["created_at"]),
        **_signal_values(r),
    }


def _rows_restore(
    name: str,
    files: ArchiveFiles,
    keys: Keys,
    make: Callable[[Keys, int, dict[str, str], dict[tuple[str, ...], int]], dict | None],
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
    fields = PREDICTION_FIELDS if model is JudgePrediction else FINAL_FIELDS

    def rows() -> Iterator[list[Any]]:
        for n, r in enumerate(files.records(name), start=2):
            result.rows += 1
            row = make(keys, n, r, ratings)
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


def snapshots_recompute(*, findings_thresholds: Sequence[float] = ()) -> None:
    """Snapshots are derived: after a restore, queue the metrics, the decision board, the
    findings (at the setting's threshold and every other one the installation had computed)
    and the alignment of every finished run's scope, computed by the worker as after any change;
    the judges' shortlists are stored again from the restored prediction runs, and every
    domain's item text parts are measured again (the choice is derived, not carried)."""
    judge_shortlists_rebuild()
    transaction.on_commit(send_item_parts_measure)
    transaction.on_commit(decisions_mark_stale)
    transaction.on_commit(findings_mark_stale)
    for threshold in findings_thresholds:
        transaction.on_commit(functools.partial(findings_mark_stale, threshold=threshold))
    done = list(JudgeRun.objects.filter(status=JudgeRun.Status.DONE).values_list("id", flat=True))
    alignment_runs_finished(run_ids=done)
    transaction.on_commit(metrics_mark_stale)
