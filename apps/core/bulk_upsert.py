"""Upserting many rows of one model: COPY into a temporary table, then one INSERT ... SELECT ...
ON CONFLICT DO UPDATE (PostgreSQL), or the ORM's `bulk_create(update_conflicts=True)`.

The same rows and the same conflict rule either way. On PostgreSQL, COPY skips what made the
ORM path slow at scale (issue 28, bench/bench_scale.py): a model instance per row, and
compiling one statement with a parameter per field and row. The ORM path serves SQLite (the
embedded demo).

A caller that expects none of its rows to be stored yet (a judge run's new predictions and
finals) says so (`expect_new`): on PostgreSQL they are then copied straight into the table, and
only if one was stored after all (a retried or taken-over task) is the batch rolled back to a
savepoint and upserted through the temporary table. Straight in, 50,000 prediction rows took
0.84 s against 1.09 s (bench_scale's 30x database).

Rows come as mappings from a field's attname (``run_id``, ``score``...) to its value; a missing
field takes its default, and ``created_at``-style fields (auto_now_add) the time of the call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection, models, transaction
from django.utils import timezone
from psycopg import errors as pg_errors

# On PostgreSQL, batches from this many rows go through COPY: every batch (the tests raise it to
# take the ORM path). Upserting 10, 100 and 200 prediction rows took 4.5, 12.5 and 14.3 ms by
# COPY, the temporary table created in each measured transaction, against 5.0, 21.6 and 39.4
# ms through the ORM; small batches are a run's finals and an LLM chunk's few rows.
COPY_MIN_ROWS = 1

Row = Mapping[str, Any]  # attname -> value


def bulk_upsert(
    model: type[models.Model],
    rows: Sequence[Row],
    *,
    unique_fields: Sequence[str],
    update_fields: Sequence[str],
    batch_size: int = 1000,
    expect_new: bool = False,
) -> int:
    """Insert these rows, or update the stored ones with the same ``unique_fields`` (field
    names) in ``update_fields``; returns the number of rows given. ``expect_new``: none is
    likely stored yet (module docstring)."""
    if not rows:
        return 0
    if connection.vendor != "postgresql" or len(rows) < COPY_MIN_ROWS:
        model._default_manager.bulk_create(
            [model(**row) for row in rows],
            batch_size=batch_size,
            update_conflicts=True,
            unique_fields=list(unique_fields),
            update_fields=list(update_fields),
        )
        return len(rows)
    if expect_new:
        try:  # _copy's atomic block is a savepoint inside the caller's transaction
            return _copy(model, rows, into_table=True)
        except pg_errors.UniqueViolation:
            pass  # one was stored after all: upsert the batch instead
    return _copy(model, rows, unique_fields=unique_fields, update_fields=update_fields)


def _copy(
    model: type[models.Model],
    rows: Sequence[Row],
    *,
    unique_fields: Sequence[str] = (),
    update_fields: Sequence[str] = (),
    into_table: bool = False,
) -> int:
    """COPY the rows into a temporary table and upsert them from there, or (``into_table``)
    straight into the model's table, where a stored key fails the whole COPY."""
    opts = model._meta
    fields = [f for f in opts.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    table = quote(opts.db_table)
    stage = quote(f"{opts.db_table}_upsert_stage")
    column = {f.name: str(f.column) for f in fields}
    columns = ", ".join(quote(column[f.name]) for f in fields)
    key = ", ".join(quote(column[name]) for name in unique_fields)
    updates = ", ".join(
        f"{quote(column[name])} = EXCLUDED.{quote(column[name])}" for name in update_fields
    )
    now = timezone.now()
    # The values the ORM would send: a missing field's default, auto_now(_add) fields the time
    # of the call, JSON as the field's encoder writes it (COPY's text reaches the column as
    # json; the ORM's adapter per value cost more than the rest of a row); numbers, text and
    # datetimes go to COPY as they are (psycopg writes them as the ORM does).
    attnames = [f.attname for f in fields]
    defaults = [
        now
        if getattr(f, "auto_now_add", False) or getattr(f, "auto_now", False)
        else f.get_default()  # as the ORM: "" for text without a default, None where nullable
        for f in fields
    ]
    json_encoder = {
        i: getattr(f, "encoder", None)
        for i, f in enumerate(fields)
        if isinstance(f, models.JSONField)
    }
    with transaction.atomic(), connection.cursor() as cur:
        if into_table:
            _copy_rows(
                cur, f"COPY {table} ({columns}) FROM STDIN", rows, attnames, defaults, json_encoder
            )
            return len(rows)
        cur.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {stage} ON COMMIT DELETE ROWS AS "
            f"SELECT {columns} FROM {table} WITH NO DATA"
        )
        _copy_rows(
            cur, f"COPY {stage} ({columns}) FROM STDIN", rows, attnames, defaults, json_encoder
        )
        cur.execute(
            f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {stage} "
            f"ON CONFLICT ({key}) DO UPDATE SET {updates}"
        )
        # ON COMMIT DELETE ROWS empties it; an outer transaction still open keeps the rows, so
        # the next batch of the same transaction must not insert them again.
        cur.execute(f"TRUNCATE {stage}")
    return len(rows)


def _copy_rows(
    cur: Any,
    statement: str,
    rows: Sequence[Row],
    attnames: Sequence[str],
    defaults: Sequence[Any],
    json_encoder: Mapping[int, Any],
) -> None:
    with cur.cursor.copy(statement) as copy:
        for row in rows:
            values = [row.get(a, d) for a, d in zip(attnames, defaults, strict=True)]
            for i, encoder in json_encoder.items():
                if values[i] is not None:
                    values[i] = json.dumps(values[i], cls=encoder)
            copy.write_row(values)
