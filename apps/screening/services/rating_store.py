"""The one way ratings are stored, with the rating-history rules, for the form, the API and imports.

Callers hand over the intended state of some ratings as a frame (one row per reviewer, idea and
dimension); `ratings_store` loads it into a temporary staging table and applies it with a few
set-based statements, the same on PostgreSQL and SQLite. The rules of the history live here only:

- a new rating is created with one history row ("" -> new state);
- an existing rating whose status, score, answers and rationale all stay the same is left alone:
  no write, no history row (storing the same screening twice changes nothing);
- otherwise one history row records old -> new and the rating takes the new values and source;
- `answers` empty (null) means "not given": the stored answers are kept while status and score
  stay the same, and dropped when either changes (they would no longer explain the score);
- `rationale` null means "not given" (an import without a rationale column): the stored one stays.

Loading the staging table is the only step that differs between databases: COPY on PostgreSQL
(for more than a screening's few rows), executemany elsewhere. bench/bench_import.py compares the
whole path with the bare COPY floor.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd
from django.db import connection
from django.db.models import Field
from django.utils import timezone

from apps.screening.models import Assignment, Rating, RatingHistory

STAGE = "pl_rating_stage"
COLUMNS = [
    "reviewer_id",
    "idea_id",
    "dimension_id",
    "status",
    "score",
    "answers",
    "rationale",
    "created_at",
    "updated_at",
]
# Below this many rows, building a CSV for COPY costs more than inserting with parameters.
COPY_FROM_ROWS = 200
# Rows written to COPY at a time: a few MB of CSV text, never the whole file's.
COPY_BLOCK_ROWS = 50_000
# Never null: the rating's key and state.
KEY_COLUMNS = ("reviewer_id", "idea_id", "dimension_id", "status")


@dataclass
class StoreResult:
    created: int = 0
    updated: int = 0
    reviewer_ids: list[int] = field(default_factory=list)
    assignments: int = 0


# The effective new answers and rationale of a staged row against its stored rating `r`.
_NEW_ANSWERS = (
    "CASE WHEN t.answers IS NULL AND r.status = t.status AND r.score IS NOT DISTINCT FROM t.score "
    "THEN r.answers ELSE t.answers END"
)
_NEW_RATIONALE = "COALESCE(t.rationale, r.rationale)"
_CHANGED = (
    f"(r.status <> t.status OR r.score IS DISTINCT FROM t.score "
    f"OR r.rationale <> {_NEW_RATIONALE} OR r.answers IS DISTINCT FROM ({_NEW_ANSWERS}))"
)


def ratings_store(
    *,
    rows: pd.DataFrame,
    source: str,
    changed_by_id: int | None,
    now: datetime | None = None,
    settle_assignments: bool = False,
) -> StoreResult:
    """Store the ratings in `rows` (columns: COLUMNS; answers a dict or None, rationale a str or
    None, score an int or None, created_at and updated_at datetimes or None: now) and their
    history.

    Must run inside the caller's transaction; the caller checks the rows against the rubric.
    `settle_assignments` (imports) also gives every staged (reviewer, idea) its assignment:
    declined when its ratings are, else completed; `changed_by_id` is then its assigner.
    """
    if rows.empty:
        return StoreResult()
    now = now or timezone.now()
    stamp = Rating._meta.get_field("updated_at").get_db_prep_value(now, connection)
    r = Rating._meta.db_table
    h = RatingHistory._meta.db_table
    json_type = Rating._meta.get_field("answers").db_type(connection)
    time_type = Rating._meta.get_field("created_at").db_type(connection)
    # One staging table per database connection, created on first use and emptied before each
    # use (and at every commit on PostgreSQL, so a bulk import leaves nothing behind): a form
    # submit pays no CREATE and DROP, which write to the system catalogues.
    on_commit = " ON COMMIT DELETE ROWS" if connection.vendor == "postgresql" else ""
    bulk = connection.vendor == "postgresql" and len(rows) >= COPY_FROM_ROWS
    with connection.cursor() as cur:
        if bulk:
            # For this transaction only: the joins and the grouping below hash the whole staging
            # table, which at PostgreSQL's default 4 MB spills to disk in batches (a million-row
            # import: 1.2 s of its history and assignment steps, 1.5 s of a re-import's).
            cur.execute("SET LOCAL work_mem = '128MB'")
        cur.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {STAGE} (reviewer_id bigint NOT NULL, "
            "idea_id bigint NOT NULL, dimension_id bigint NOT NULL, "
            "status varchar(16) NOT NULL, score smallint, "
            f"answers {json_type}, rationale text, created_at {time_type}, "
            f"updated_at {time_type}, rating_id bigint, "
            f"changed smallint NOT NULL DEFAULT 0){on_commit}"
        )
        cur.execute(f"DELETE FROM {STAGE}")
        _load_stage(cur, rows, with_copy=bulk)
        key = (
            "r.reviewer_id = t.reviewer_id AND r.idea_id = t.idea_id "
            "AND r.dimension_id = t.dimension_id"
        )
        # Which staged rows already exist, and which of those change (one join).
        cur.execute(
            f"UPDATE {STAGE} AS t SET rating_id = r.id, "
            f"changed = CASE WHEN {_CHANGED} THEN 1 ELSE 0 END FROM {r} AS r WHERE {key}"
        )
        history_columns = (
            "rating_id, changed_by_id, changed_at, source, old_status, old_score, old_answers, "
            "old_rationale, new_status, new_score, new_answers, new_rationale"
        )
        cur.execute(
            f"INSERT INTO {h} ({history_columns}) "
            f"SELECT r.id, %s, %s, %s, r.status, r.score, r.answers, r.rationale, t.status, "
            f"t.score, {_NEW_ANSWERS}, {_NEW_RATIONALE} "
            f"FROM {STAGE} AS t JOIN {r} AS r ON r.id = t.rating_id WHERE t.changed = 1",
            [changed_by_id, stamp, source],
        )
        cur.execute(
            f"UPDATE {r} AS r SET status = t.status, score = t.score, answers = {_NEW_ANSWERS}, "
            f"rationale = {_NEW_RATIONALE}, source = %s, updated_at = COALESCE(t.updated_at, %s) "
            f"FROM {STAGE} AS t WHERE r.id = t.rating_id AND t.changed = 1",
            [source, stamp],
        )
        updated = cur.rowcount
        cur.execute(
            f"INSERT INTO {r} (reviewer_id, idea_id, dimension_id, status, score, answers, "
            "rationale, source, created_at, updated_at) "
            "SELECT t.reviewer_id, t.idea_id, t.dimension_id, t.status, t.score, t.answers, "
            "COALESCE(t.rationale, ''), %s, COALESCE(t.created_at, %s), COALESCE(t.updated_at, %s) "
            f"FROM {STAGE} AS t WHERE t.rating_id IS NULL "
            "ON CONFLICT (reviewer_id, idea_id, dimension_id) DO NOTHING",
            [source, stamp, stamp],
        )
        created = cur.rowcount
        # Creation rows for the ratings just inserted. A rating another transaction inserted
        # and committed in between (the same screening submitted on the form, or imported,
        # during this import) was skipped above and would get a second creation row here,
        # recording its own values. Rare enough to accept rather than lock the ratings table.
        cur.execute(
            f"INSERT INTO {h} ({history_columns}) "
            "SELECT r.id, %s, %s, %s, '', NULL, NULL, '', r.status, r.score, r.answers, "
            f"r.rationale FROM {STAGE} AS t JOIN {r} AS r ON {key} WHERE t.rating_id IS NULL",
            [changed_by_id, stamp, source],
        )
        cur.execute(
            f"SELECT DISTINCT reviewer_id FROM {STAGE} WHERE rating_id IS NULL OR changed = 1"
        )
        reviewer_ids = sorted(int(x) for (x,) in cur.fetchall())
        assignments = _settle_assignments(cur, changed_by_id, stamp) if settle_assignments else 0
    return StoreResult(
        created=created, updated=updated, reviewer_ids=reviewer_ids, assignments=assignments
    )


def _settle_assignments(cur: Any, assigned_by_id: int | None, stamp: Any) -> int:
    a = Assignment._meta.db_table
    declined, completed = Assignment.Status.DECLINED.value, Assignment.Status.COMPLETED.value
    cur.execute(
        f"INSERT INTO {a} (reviewer_id, idea_id, status, assigned_by_id, decline_reason, "
        "created_at, updated_at) "
        f"SELECT reviewer_id, idea_id, CASE WHEN MAX(CASE WHEN status = %s THEN 1 ELSE 0 END) = 1 "
        f"THEN %s ELSE %s END, %s, '', %s, %s FROM {STAGE} WHERE true "
        "GROUP BY reviewer_id, idea_id "
        "ON CONFLICT (reviewer_id, idea_id) DO UPDATE SET status = excluded.status, "
        f"updated_at = excluded.updated_at WHERE {a}.status <> excluded.status",
        [declined, declined, completed, assigned_by_id, stamp, stamp],
    )
    return cur.rowcount


def _load_stage(cur, rows: pd.DataFrame, *, with_copy: bool) -> None:
    """Fill the staging table: with COPY (PostgreSQL, a million rows in seconds), else, and for
    the few rows of one screening, executemany."""
    answers_field = Rating._meta.get_field("answers")
    time_field = Rating._meta.get_field("created_at")
    if with_copy:
        out = pd.DataFrame(
            {
                "reviewer_id": rows["reviewer_id"],
                "idea_id": rows["idea_id"],
                "dimension_id": rows["dimension_id"],
                "status": rows["status"],
                "score": rows["score"].astype("Int64"),
                "answers": _when_any(rows["answers"], lambda c: c.map(_json_text)),
                "rationale": rows["rationale"],
                "created_at": _iso(rows["created_at"]),
                "updated_at": _iso(rows["updated_at"]),
            }
        )
        # Columns null on every row (no answers, rationales or times in the file) are left to
        # the table's default, NULL: a million empty fields cost time to write and to parse.
        out = out[[c for c in COLUMNS if c in KEY_COLUMNS or out[c].notna().any()]]
        # CSV reads an empty field as NULL. Rationales are either all given (then "" is an empty
        # rationale) or none are (an import without that column: NULL keeps the stored ones).
        given = rows["rationale"].notna()
        if given.any() and not given.all():
            raise ValueError("ratings_store: give a rationale for every row or for none")
        force = ", FORCE_NOT_NULL (rationale)" if given.all() else ""
        columns = ", ".join(out.columns)
        with cur.cursor.copy(f"COPY {STAGE} ({columns}) FROM STDIN (FORMAT csv{force})") as copy:
            # Block by block: the whole CSV as one string (and its StringIO, 4 bytes a
            # character once a rationale has an accent) was the import's peak (issue 21.2).
            for start in range(0, len(out), COPY_BLOCK_ROWS):
                block = out.iloc[start : start + COPY_BLOCK_ROWS]
                copy.write(block.to_csv(index=False, header=False, na_rep=""))
        cur.execute(f"ANALYZE {STAGE}")
        return
    params = []
    for rec in rows[COLUMNS].itertuples(index=False, name=None):
        reviewer_id, idea_id, dimension_id, status, score, answers, rationale, created, updated = (
            rec
        )
        params.append(
            (
                int(reviewer_id),
                int(idea_id),
                int(dimension_id),
                status,
                None if _missing(score) else int(score),
                None if _missing(answers) else answers_field.get_db_prep_value(answers, connection),
                None if _missing(rationale) else rationale,
                _db_time(time_field, created),
                _db_time(time_field, updated),
            )
        )
    cur.executemany(
        f"INSERT INTO {STAGE} ({', '.join(COLUMNS)}) VALUES ({', '.join(['%s'] * len(COLUMNS))})",
        params,
    )


def _when_any(column: pd.Series, convert: Any) -> pd.Series:
    """`convert(column)`, skipped (all null) when the column holds no value at all."""
    if column.isna().all():
        return pd.Series(None, index=column.index, dtype=object)
    return convert(column)


def _iso(stamps: pd.Series) -> pd.Series:
    return _when_any(
        stamps,
        lambda c: pd.to_datetime(c, utc=True).dt.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00"),
    )


def _db_time(time_field: Field, value: object) -> object:
    if _missing(value):
        return None
    return time_field.get_db_prep_value(pd.Timestamp(value).to_pydatetime(), connection)


def _missing(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and value != value


def _json_text(value: object) -> object:
    return None if _missing(value) else json.dumps(value)
