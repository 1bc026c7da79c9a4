"""Storing a batch of per-seed predictions: an upsert under (run, reviewer, idea, dimension,
kind, k, seed), the key services.chunks skips stored units by.

Through apps.core.bulk_upsert: COPY on PostgreSQL (the ORM's SQL compilation was most of a
local judge run's storing time, issue 28), `bulk_create` on SQLite.

Rows come as mappings from a field's attname (``run_id``, ``score``...) to its value, not as
model instances: building 250,000 JudgePrediction objects was a fifth of a refresh's judging
time at 10,200 ratings, for values COPY writes as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth import get_user_model

from apps.catalog.models import Idea
from apps.core.bulk_upsert import Row, bulk_upsert
from apps.judges.models import JudgeConfig, JudgePrediction, JudgeRun
from apps.screening.models import Dimension

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


def predictions_upsert(rows: Sequence[Row], *, expect_new: bool = False) -> int:
    """Insert these predictions, or update the stored ones with the same key; returns the count.
    ``expect_new``: none of these keys is likely stored (apps.core.bulk_upsert)."""
    return bulk_upsert(
        JudgePrediction,
        rows,
        unique_fields=UNIQUE_FIELDS,
        update_fields=UPDATE_FIELDS,
        expect_new=expect_new,
    )


def forget_deleted_references(run: JudgeRun) -> int:
    """The run's predictions of a reviewer, idea or dimension deleted while it ran are deleted,
    and those of a deleted configuration lose it (SET_NULL), as Django did for the rows stored
    before. These references have no database constraint (apps.judges.models.results), so a
    row written after the delete would otherwise outlive its object. Called before the run's
    finals are voted; returns how many predictions were deleted."""
    preds = JudgePrediction.objects.filter(run_id=run.id)
    deleted, _ = (
        preds.exclude(reviewer_id__in=get_user_model().objects.values("id"))
        | preds.exclude(idea_id__in=Idea.objects.values("id"))
        | preds.exclude(dimension_id__in=Dimension.objects.values("id"))
    ).delete()
    preds.filter(config_id__isnull=False).exclude(
        config_id__in=JudgeConfig.objects.values("id")
    ).update(config=None)
    return deleted
