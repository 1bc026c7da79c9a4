"""The judges in the archive (version 2): configurations, runs, per-seed predictions, finals,
calibrations and their history, and how each is written.

Judge runs keep their id: pages, snapshots ("run-<id>") and finals name runs by id, and a
restore goes into an installation that has none. Predictions and finals name their target by
natural keys (reviewer, idea, dimension) and a prediction its few-shot examples by rating key.
The configuration fields are the judges' own (`judges.services.configs.CONFIG_FIELDS`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from apps.accounts.models import User
from apps.dataio.services.archive.common import iso
from apps.dataio.services.archive.members import ArchiveWriter
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


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def judges_write(writer: ArchiveWriter) -> None:
    """The judges' files, written into the archive."""
    users = dict(User.objects.values_list("id", "username"))
    ratings = {
        rid: [idea, reviewer, dim]
        for rid, idea, reviewer, dim in Rating.objects.values_list(
            "id", "idea__external_id", "reviewer__username", "dimension__key"
        ).iterator(chunk_size=5000)
    }
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
    writer.write_csv(
        "judge_predictions.csv",
        PREDICTION_COLUMNS,
        _target_rows(JudgePrediction.objects.order_by("id"), PREDICTION_COLUMNS, ratings),
    )
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


def _target_rows(
    queryset: Any, columns: Sequence[str], ratings: dict[int, list[str]] | None = None
) -> Iterator[list[str]]:
    """Rows of predictions or finals, each column read by its name (TARGET_SOURCES); a
    prediction names its few-shot examples by rating key ([idea, reviewer, dimension])."""
    lookups = {c: TARGET_SOURCES.get(c, c) for c in columns}
    for row in queryset.values(*lookups.values()).iterator(chunk_size=5000):
        cells: dict[str, str] = {}
        for column, lookup in lookups.items():
            value = row[lookup]
            if column == "created_at":
                cells[column] = iso(value)
            elif column == "example_ratings":
                known = ratings or {}
                cells[column] = json.dumps([known[i] for i in value or [] if i in known])
            else:
                cells[column] = _cell(value)
        yield [cells[c] for c in columns]
