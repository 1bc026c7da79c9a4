"""Storing a batch of per-seed predictions: an upsert under (run, reviewer, idea, dimension,
kind, k, seed), the key services.chunks skips stored units by.

On PostgreSQL a batch of at least COPY_MIN_ROWS streams through COPY into a temporary table and
one INSERT ... SELECT ... ON CONFLICT DO UPDATE moves it into the predictions table: the same
rows and the same conflict rule as `bulk_create(update_conflicts=True)`, without compiling one
statement with 25 parameters per row (issue 28: the ORM's SQL compilation was most of a local
judge run's storing time, bench/bench_scale.py). Elsewhere (SQLite, the embedded demo), and for
small batches (an LLM chunk's few rows), it is that bulk_create.

Rows come as mappings from a field's attname (``run_id``, ``score``...) to its value, not as
model instances: building 250,000 JudgePrediction objects was a fifth of a refresh's judging
time at 10,200 ratings, for values COPY writes as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection, models, transaction
from django.utils import timezone

from apps.judges.models import JudgePrediction

UNIQUE_FIELDS = ["run", "reviewer", "idea", "dimension", "kind", "k", "seed"]
# What a conflicting (already stored) row gets from the new one: everything but its key, its
# id and when it was first stored.
UPDATE_FIELDS = [
    "config",
    "score",
    "reason",
    "confidence",
    "raw_confidence",
    "signal",
    "panel_size",
    "level_score",
    "model",
    "backend",
    "response_mode",
    "prompt_fingerprint",
    "example_rating_ids",
    "raw_reply",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "latency_ms",
    "attempts",
    "error",
]
# Below this, the temporary table costs more than it saves.
COPY_MIN_ROWS = 200
STAGE = "judges_prediction_stage"


PredictionRow = Mapping[str, Any]  # attname -> value; a missing field takes its default


def predictions_upsert(rows: Sequence[PredictionRow]) -> int:
    """Insert these predictions, or update the stored ones with the same key; returns the count."""
    if not rows:
        return 0
    if connection.vendor != "postgresql" or len(rows) < COPY_MIN_ROWS:
        JudgePrediction.objects.bulk_create(
            [JudgePrediction(**row) for row in rows],
            batch_size=1000,
            update_conflicts=True,
            unique_fields=UNIQUE_FIELDS,
            update_fields=UPDATE_FIELDS,
        )
        return len(rows)
    return _copy_upsert(rows)


def _copy_upsert(rows: Sequence[PredictionRow]) -> int:
    opts = JudgePrediction._meta
    fields = [f for f in opts.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    table = quote(opts.db_table)
    column = {f.name: str(f.column) for f in fields}
    columns = ", ".join(quote(column[f.name]) for f in fields)
    key = ", ".join(quote(column[name]) for name in UNIQUE_FIELDS)
    updates = ", ".join(
        f"{quote(column[name])} = EXCLUDED.{quote(column[name])}" for name in UPDATE_FIELDS
    )
    now = timezone.now()
    # The values the ORM would send: a missing field's default, created_at as auto_now_add
    # sets it, the ORM's own conversion where a field has one to make (JSON); numbers, text and
    # datetimes go to COPY as they are (psycopg writes them as the ORM does).
    attnames = [f.attname for f in fields]
    defaults = [
        now if f.attname == "created_at" else (f.get_default() if f.has_default() else None)
        for f in fields
    ]
    json_at = [i for i, f in enumerate(fields) if isinstance(f, models.JSONField)]
    json_prep = {i: fields[i].get_db_prep_save for i in json_at}
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {STAGE} ON COMMIT DELETE ROWS AS "
            f"SELECT {columns} FROM {table} WITH NO DATA"
        )
        with cur.cursor.copy(f"COPY {STAGE} ({columns}) FROM STDIN") as copy:
            for row in rows:
                values = [row.get(a, d) for a, d in zip(attnames, defaults, strict=True)]
                for i in json_at:
                    values[i] = json_prep[i](values[i], connection)
                copy.write_row(values)
        cur.execute(
            f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {STAGE} "
            f"ON CONFLICT ({key}) DO UPDATE SET {updates}"
        )
        # ON COMMIT DELETE ROWS empties it; an outer transaction still open keeps the rows, so
        # the next batch of the same transaction must not insert them again.
        cur.execute(f"TRUNCATE {STAGE}")
    return len(rows)
