"""Coverage and discards: coverage-accuracy as the confidence threshold moves, discard rates,
and the ideas the case view shows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

COVERAGE_THRESHOLDS = list(range(0, 101, 5))


def coverage_accuracy(
    predictions: pd.DataFrame, *, thresholds: list[int] | None = None
) -> list[dict[str, Any]]:
    """The coverage-accuracy curve of one configuration as the confidence threshold moves.

    predictions: one row per seed prediction with `confidence` (NaN when the call failed) and
    `correct` (bool: the score equals the reviewer's own); or one row per group of them alike,
    counted in `n`. At threshold c, coverage is the share of predictions with confidence >= c,
    accuracy the share of those exactly right (None when nothing is kept).
    """
    thresholds = COVERAGE_THRESHOLDS if thresholds is None else thresholds
    if predictions.empty:
        return []
    conf = predictions["confidence"].to_numpy(float)
    correct = predictions["correct"].to_numpy(bool)
    n = predictions["n"].to_numpy(int) if "n" in predictions else np.ones(len(conf), dtype=int)
    total = int(n.sum())
    if total == 0:
        return []
    points = []
    for c in thresholds:
        kept = ~np.isnan(conf) & (conf >= c)
        n_kept = int(n[kept].sum())
        points.append(
            {
                "threshold": int(c),
                "coverage": n_kept / total,
                "accuracy": int(n[kept & correct].sum()) / n_kept if n_kept else None,
                "n_kept": n_kept,
            }
        )
    return points


def case_idea_ids(finals: pd.DataFrame, *, limit: int = 6) -> list[int]:
    """Ideas where the personalized and aggregate judges disagreed most (Appendix F candidates)."""
    if finals.empty:
        return []
    top = finals[finals["k"] == finals.groupby("kind")["k"].transform("max")]
    wide = top.pivot_table(
        index=["idea_id", "reviewer_id", "dimension"], columns="kind", values="pred"
    )
    if "personalized" not in wide or "aggregate" not in wide:
        return []
    gap = (wide["personalized"] - wide["aggregate"]).abs().dropna().sort_values(ascending=False)
    return list(dict.fromkeys(int(i) for i, _, _ in gap.index[: limit * 5]))[:limit]


def discard_rates(counts: pd.DataFrame) -> list[dict[str, Any]]:
    """Share of scored predictions discarded for low confidence, per domain and dimension.

    counts: seed predictions counted by domain and dimension (and anything finer): `n`,
    `n_scored` and `n_discarded`.
    """
    if counts.empty:
        return []
    rows = []
    totals = counts.groupby(["domain", "dimension"], sort=True)[["n", "n_scored", "n_discarded"]]
    for (domain, dimension), g in totals.sum().iterrows():
        scored, discarded = int(g["n_scored"]), int(g["n_discarded"])
        rows.append(
            {
                "domain": domain,
                "dimension": dimension,
                "n_predictions": int(g["n"]),
                "n_scored": scored,
                "n_discarded": discarded,
                "n_failed": int(g["n"]) - scored,
                "discard_rate": (discarded / scored) if scored else None,
            }
        )
    return rows
