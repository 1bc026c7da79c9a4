"""Calibrating a finished evaluation run's confidences (engine.calibration) and storing the
fit per (domain, dimension, kind, backend) for later prediction runs.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, cast

import numpy as np
from django.db import IntegrityError, connection, transaction

from apps.judges.engine.calibration import cross_fit_confidence, fit_calibration
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


def calibrate_run(run: JudgeRun, plan: Plan) -> None:
    """Leave-one-out runs: calibrate each seed's confidence empirically, cross-fitted by
    reviewer (a reviewer's confidences come from a fit that did not see them), and store the
    fit per (domain, dimension, kind, backend) for later prediction runs of that scope.

    Only rows whose calibrated confidence differs are written (see SMALL_UPDATE)."""
    truth = {
        (int(r[3]), int(r[1]), dim_id): int(r[4])
        for dim_id, rows in plan.pools.items()
        for r in rows
    }
    backend_of = {s.id: s.backend for s in plan.specs.values()}
    # Right = within the scale's tolerance (exact on coarse scales; engine.panel.tolerance).
    tolerances = {d_id: tolerance(d.scale_min, d.scale_max) for d_id, d in plan.dims.items()}
    # (prediction id, reviewer id, raw confidence, correct, stored confidence) per scope.
    groups: dict[tuple[int, str, str], list[tuple[int, int, float, bool, int | None]]] = (
        defaultdict(list)
    )
    rows = JudgePrediction.objects.filter(run_id=run.id, score__isnull=False).values_list(
        "id",
        "reviewer_id",
        "idea_id",
        "dimension_id",
        "kind",
        "config_id",
        "score",
        "raw_confidence",
        "confidence",
    )
    for pid, reviewer, idea, dim_id, kind, config_id, score, raw_conf, current in rows:
        if raw_conf is None or (reviewer, idea, dim_id) not in truth:
            continue
        backend = backend_of.get(config_id, JudgeConfig.Backend.LOCAL)
        is_correct = abs(truth[(reviewer, idea, dim_id)] - cast(int, score)) <= tolerances[dim_id]
        groups[(dim_id, kind, backend)].append((pid, reviewer, raw_conf, is_correct, current))
    changed: dict[int, list[int]] = defaultdict(list)
    for (dim_id, kind, backend), items in groups.items():
        raw = np.array([i[2] for i in items], dtype=float)
        correct = np.array([i[3] for i in items], dtype=bool)
        reviewers = np.array([i[1] for i in items])
        calibrated = cross_fit_confidence(raw, correct, reviewers)
        for item, value in zip(items, calibrated, strict=True):
            if item[4] != int(value):
                changed[int(value)].append(item[0])
        fit = fit_calibration(raw, correct)
        scope: dict[str, Any] = {
            "domain_id": run.domain_id,
            "dimension": plan.dims[dim_id].key,
            "kind": kind,
            "backend": backend,
        }
        # A fit on more predictions (a study) is not replaced by one on fewer (one reviewer's
        # evaluation); equal or larger ones replace it, so it follows the newer ratings.
        stored_n = JudgeCalibration.objects.filter(**scope).values_list("n", flat=True).first()
        if stored_n is None or len(items) >= stored_n:
            try:
                with transaction.atomic():
                    JudgeCalibration.objects.update_or_create(
                        **scope, defaults={"fit": fit.to_dict(), "n": len(items), "run": run}
                    )
            except IntegrityError:  # another run of the scope stored its fit at the same moment
                pass
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
