"""Calibrating a finished evaluation run's confidences (engine.calibration) and storing the
fit per (domain, dimension, kind, backend) for later prediction runs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
from django.db import connection

from apps.judges.engine.calibration import Calibration, cross_fit_confidence, fit_calibration
from apps.judges.engine.panel import tolerance
from apps.judges.models import (
    JudgeCalibration,
    JudgeConfig,
    JudgePrediction,
    JudgeRun,
)
from apps.judges.services.run_plans import Plan

# Calibrated confidences are written on PostgreSQL in one statement from two arrays; elsewhere
# up to this many rows in one statement (bulk_update), more with one UPDATE per distinct value
# (at most 101). (On PostgreSQL bulk_update's CASE of 500 rows took 0.2 s to compile: a fifth
# of a small evaluation run.)
SMALL_UPDATE = 500


# The order a run's rows are cross-fitted in (the plan's: planning.plan_units). A single
# reviewer's rows are split into folds by position, which must depend neither on where
# PostgreSQL keeps the rows nor on the order they were stored in (batches, a resumed run).
ROW_ORDER = ("dimension_id", "kind", "config_id", "k", "seed", "reviewer_id", "idea_id")
_CALIBRATED_FIELDS = ("reviewer_id", "idea_id", "dimension_id", "kind", "config_id", "score")


def _order_key(row: Mapping[str, Any]) -> tuple:
    return tuple(-1 if row[f] is None else row[f] for f in ROW_ORDER)


def calibrated_confidences(
    run: JudgeRun, plan: Plan, rows: Sequence[Mapping[str, Any]]
) -> list[int | None]:
    """Leave-one-out runs: each row's confidence calibrated empirically, cross-fitted by
    reviewer (a reviewer's confidences come from a fit that did not see them), and the fit
    stored per (domain, dimension, kind, backend) for later prediction runs of that scope.

    `rows` hold the fields of ROW_ORDER and _CALIBRATED_FIELDS with `raw_confidence` and
    `confidence`; returns each row's calibrated confidence (its `confidence` where it has no
    score, no raw confidence or no rating to be right about)."""
    truth = {
        (int(r[3]), int(r[1]), dim_id): int(r[4])
        for dim_id, pool in plan.pools.items()
        for r in pool
    }
    backend_of = {s.id: s.backend for s in plan.specs.values()}
    # Right = within the scale's tolerance (exact on coarse scales; engine.panel.tolerance).
    tolerances = {d_id: tolerance(d.scale_min, d.scale_max) for d_id, d in plan.dims.items()}
    out: list[int | None] = [row["confidence"] for row in rows]
    # (position in rows, reviewer id, raw confidence, correct) per scope.
    groups: dict[tuple[int, str, str], list[tuple[int, int, float, bool]]] = defaultdict(list)
    for n in sorted(range(len(rows)), key=lambda i: _order_key(rows[i])):
        row = rows[n]
        target = (row["reviewer_id"], row["idea_id"], row["dimension_id"])
        if row["score"] is None or row["raw_confidence"] is None or target not in truth:
            continue
        backend = backend_of.get(row["config_id"], JudgeConfig.Backend.LOCAL)
        dim_id = row["dimension_id"]
        is_correct = abs(truth[target] - cast(int, row["score"])) <= tolerances[dim_id]
        groups[(dim_id, row["kind"], backend)].append(
            (n, row["reviewer_id"], row["raw_confidence"], is_correct)
        )
    fits: dict[tuple[str, str, str], tuple[Calibration, int]] = {}
    for (dim_id, kind, backend), items in groups.items():
        raw = np.array([i[2] for i in items], dtype=float)
        correct = np.array([i[3] for i in items], dtype=bool)
        reviewers = np.array([i[1] for i in items])
        for item, value in zip(items, cross_fit_confidence(raw, correct, reviewers), strict=True):
            out[item[0]] = int(value)
        scope = (plan.dims[dim_id].key, kind, backend)
        if scope not in fits or len(items) >= fits[scope][1]:
            fits[scope] = (fit_calibration(raw, correct), len(items))
    _store_fits(run, fits)
    return out


def _store_fits(
    run: JudgeRun, fits: Mapping[tuple[str, str, str], tuple[Calibration, int]]
) -> None:
    """Store a run's fits by (dimension key, kind, backend): one read of the sizes stored and
    one upsert (a read, an update_or_create and a savepoint per fit took a twentieth of an
    evaluation, 18 fits each). A fit on more predictions (a study) is not replaced by one on
    fewer (one reviewer's evaluation); equal or larger ones replace it, so it follows the newer
    ratings."""
    if not fits:
        return
    stored = {
        (dimension, kind, backend): n
        for dimension, kind, backend, n in JudgeCalibration.objects.filter(
            domain_id=run.domain_id, dimension__in={scope[0] for scope in fits}
        ).values_list("dimension", "kind", "backend", "n")
    }
    JudgeCalibration.objects.bulk_create(
        [
            JudgeCalibration(
                domain_id=run.domain_id,
                dimension=dimension,
                kind=kind,
                backend=backend,
                fit=fit.to_dict(),
                n=n,
                run=run,
            )
            for (dimension, kind, backend), (fit, n) in fits.items()
            if n >= stored.get((dimension, kind, backend), 0)
        ],
        # Another run of the scope storing its fit at the same moment: the later write wins.
        update_conflicts=True,
        unique_fields=["domain", "dimension", "kind", "backend"],
        update_fields=["fit", "n", "run", "updated_at"],
    )


def calibrate_run(run: JudgeRun, plan: Plan) -> None:
    """Calibrate a leave-one-out run's stored rows (calibrated_confidences) and write back the
    confidences that changed (see SMALL_UPDATE). A run judged whole in memory was stored
    calibrated already (services.chunks): this is for the runs stored batch by batch."""
    fields = ("id", *_CALIBRATED_FIELDS, "k", "seed", "raw_confidence", "confidence")
    rows = list(JudgePrediction.objects.filter(run_id=run.id, score__isnull=False).values(*fields))
    changed: dict[int, list[int]] = defaultdict(list)
    for row, value in zip(rows, calibrated_confidences(run, plan, rows), strict=True):
        if value is not None and row["confidence"] != value:
            changed[value].append(row["id"])
    n_changed = sum(len(ids) for ids in changed.values())
    if connection.vendor == "postgresql":
        _update_confidences_postgresql(changed)
        return
    if n_changed <= SMALL_UPDATE:
        JudgePrediction.objects.bulk_update(
            [
                JudgePrediction(id=pid, confidence=value)
                for value, ids in changed.items()
                for pid in ids
            ],
            ["confidence"],
            batch_size=SMALL_UPDATE,
        )
        return
    for value, ids in changed.items():
        for start in range(0, len(ids), 5000):
            JudgePrediction.objects.filter(id__in=ids[start : start + 5000]).update(
                confidence=value
            )


def _update_confidences_postgresql(changed: dict[int, list[int]]) -> None:
    """Every changed confidence in one statement per 50,000 rows (two arrays unnested), where
    one UPDATE per distinct value took a hundred round trips per evaluation run."""
    pairs = [(pid, value) for value, ids in changed.items() for pid in ids]
    table = connection.ops.quote_name(JudgePrediction._meta.db_table)
    with connection.cursor() as cur:
        for start in range(0, len(pairs), 50_000):
            part = pairs[start : start + 50_000]
            cur.execute(
                f"UPDATE {table} AS p SET confidence = v.confidence "
                "FROM unnest(%s::bigint[], %s::integer[]) AS v(id, confidence) WHERE p.id = v.id",
                [[pid for pid, _ in part], [value for _, value in part]],
            )
