"""Alignment figures: Krippendorff's alpha of a judge against the reviewer's own scores, per
configuration, k and dimension (pooled and per reviewer), with the level-only baseline and the
judge's lift over it (engine.level). Definitions: the package docstring."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from apps.disagreement.analysis.alpha import krippendorff_alpha as _shared_alpha
from apps.judges.engine import level as levels

KIND_ORDER = ["zero_shot", "aggregate", "personalized"]


def frame_groups(
    frame: pd.DataFrame, keys: str | list[str], *, sort: bool = True
) -> Iterator[tuple[Any, pd.DataFrame]]:
    """(key, rows) as ``frame.groupby(keys, sort=sort)`` gives them, each group's rows in the
    frame's order, taken one group at a time: iterating a groupby first sorts a copy of the
    whole frame, a second frame of every final at the overall alignment scope (bench_scale)."""
    cells = frame.groupby(keys, sort=sort).indices
    order = sorted(cells) if sort else sorted(cells, key=lambda key: cells[key][0])
    for key in order:
        yield key, frame.take(cells[key])


def _clean(x: float | np.floating | None) -> float | None:
    if x is None:
        return None
    try:
        xf = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(xf) or math.isinf(xf) else xf


def _ordinal_alpha_fallback(data: np.ndarray, values: list[float] | None) -> float:
    """Krippendorff's ordinal alpha (coincidence matrix); only if the shared one is absent."""
    vals = sorted(values) if values else sorted({v for v in data.flatten() if not np.isnan(v)})
    index = {v: i for i, v in enumerate(vals)}
    m = len(vals)
    if m < 2:
        return float("nan")
    o = np.zeros((m, m))
    for unit in data.T:
        present = [v for v in unit if not np.isnan(v)]
        mu = len(present)
        if mu < 2:
            continue
        for a in range(mu):
            for b in range(mu):
                if a != b:
                    o[index[present[a]], index[present[b]]] += 1.0 / (mu - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n <= 1:
        return float("nan")
    delta = np.zeros((m, m))
    for c in range(m):
        for k in range(m):
            lo, hi = min(c, k), max(c, k)
            delta[c, k] = (n_c[lo : hi + 1].sum() - (n_c[c] + n_c[k]) / 2.0) ** 2
    d_o = (o * delta).sum()
    d_e = (np.outer(n_c, n_c) * delta).sum()
    if d_e == 0:
        return float("nan")
    return float(1.0 - (n - 1) * d_o / d_e)


def alpha(
    data: np.ndarray, *, values: list[float] | None = None, level: str = "ordinal"
) -> float | None:
    """Alpha over a coders x units matrix (NaN = missing); None when undefined."""
    if data.size == 0:
        return None
    try:
        if _shared_alpha is not None:
            result = _shared_alpha(data, level=level, values=values)
        else:
            result = _ordinal_alpha_fallback(data, values)
    except (ValueError, ZeroDivisionError):
        return None
    return _clean(result)


def _values(scales: dict[str, tuple[int, int]], dimension: str) -> list[float] | None:
    if dimension not in scales:
        return None
    lo, hi = scales[dimension]
    return [float(v) for v in range(lo, hi + 1)]


def judge_vs_truth_alpha(
    group: pd.DataFrame, values: list[float] | None
) -> tuple[float | None, int]:
    """Alpha between predictions and truths of one group; n = items where the judge kept a score."""
    truth, pred = group["truth"].to_numpy(float), group["pred"].to_numpy(float)
    scored = ~np.isnan(truth)  # as arrays: a frame's dropna per cell was most of a report
    data = np.vstack([truth[scored], pred[scored]])
    n = int(np.count_nonzero(~np.isnan(pred[scored])))
    return (alpha(data, values=values) if n >= 2 else None), n


def alignment_curve(
    finals: pd.DataFrame, *, scales: dict[str, tuple[int, int]], by_reviewer: bool = False
) -> list[dict[str, Any]]:
    """Alpha per (kind, k, dimension) [and reviewer]: the series behind paper 001's Figure 2."""
    if finals.empty:
        return []
    keys = ["dimension", "kind", "k"] + (["reviewer_id"] if by_reviewer else [])
    rows = []
    for key, group in frame_groups(finals, keys):
        values = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        a, n = judge_vs_truth_alpha(group, _values(scales, values["dimension"]))
        values["k"] = int(values["k"])
        if "reviewer_id" in values:
            values["reviewer_id"] = int(values["reviewer_id"])
        kept, discarded = int(group["kept"].sum()), int(group["discarded"].sum())
        n_targets = int(group["truth"].notna().sum())
        vals = _values(scales, values["dimension"])
        within, n_reviewers = levels.per_reviewer_figure(levels.reviewer_alphas(group, vals, alpha))
        rows.append(
            {
                **values,
                # Pooled: every reviewer's targets in one table (paper 001's figure); it
                # rewards matching each reviewer's level. Per-reviewer: the mean of each
                # reviewer's own alpha (engine.level), the figure verdicts and charts use.
                "alpha": a,
                "within_alpha": within,
                "n_reviewers": n_reviewers,
                **_baseline(group, vals),
                "n": n,
                "n_targets": n_targets,
                # Share of targets where the judge kept a prediction: alpha is over these only.
                "coverage": (n / n_targets) if n_targets else None,
                "discard_rate": (discarded / (kept + discarded)) if kept + discarded else None,
            }
        )
    rows.sort(key=lambda r: (r["dimension"], _kind_pos(r["kind"]), r["k"]))
    return rows


def _baseline(group: pd.DataFrame, values: list[float] | None, n_boot: int = levels.N_BOOT) -> dict:
    """Level-only baseline, lift and its interval on the group's targets (engine.level)."""
    if "base" not in group.columns:
        figures = levels.paired_alphas(np.zeros(0), np.zeros(0), np.zeros(0), values, n_boot=n_boot)
    else:
        # The bootstrap draws how many targets of each (truth, judge, baseline) triple it
        # takes, so the order the frame came in does not matter (a reviewer's section and
        # their own report agree).
        rows = np.flatnonzero(~np.isnan(group["truth"].to_numpy(float)))
        figures = levels.paired_alphas(
            group["truth"].to_numpy(float)[rows],
            group["pred"].to_numpy(float)[rows],
            group["base"].to_numpy(float)[rows],
            values,
            n_boot=n_boot,
        )
    figures["lift_status"] = levels.lift_status(figures["lift"], figures["lift_low"])
    figures["adds_nothing"] = figures["lift_status"] == levels.NIL
    figures["lift_text"] = levels.lift_sentence(
        figures["lift"],
        figures["lift_low"],
        figures["lift_high"],
        n_departs=figures.get("n_departs"),
        n=figures.get("n_baseline"),
    )
    return figures


def _kind_pos(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)
