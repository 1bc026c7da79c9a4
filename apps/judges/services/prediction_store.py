"""Storing a batch of per-seed predictions: an upsert under (run, reviewer, idea, dimension,
kind, k, seed), the key services.chunks skips stored units by.

Through apps.core.bulk_upsert: COPY on PostgreSQL for a batch of the local judge (the ORM's SQL
compilation was most of a local judge run's storing time, issue 28), `bulk_create` for small
batches (an LLM chunk's few rows) and on SQLite.

Rows come as mappings from a field's attname (``run_id``, ``score``...) to its value, not as
model instances: building 250,000 JudgePrediction objects was a fifth of a refresh's judging
time at 10,200 ratings, for values COPY writes as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from apps.core.bulk_upsert import Row, bulk_upsert
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


def predictions_upsert(rows: Sequence[Row]) -> int:
    """Insert these predictions, or update the stored ones with the same key; returns the count."""
    return bulk_upsert(
        JudgePrediction, rows, unique_fields=UNIQUE_FIELDS, update_fields=UPDATE_FIELDS
    )
