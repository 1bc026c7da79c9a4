"""Empirical confidence calibration (pure; no Django).

Contract used by the run execution:
- fit_calibration(raw_confidence, correct) -> Calibration, fitted on leave-one-out predictions
  (raw 0-100 confidences and whether each prediction was exactly right);
- Calibration.apply(raw_confidence) -> calibrated 0-100 ints (array in, array out);
- Calibration.to_dict() / Calibration.from_dict(d): JSON-safe, for storing the fit;
- cross_fit_confidence(raw_confidence, correct, groups) -> calibrated 0-100 ints, each row
  calibrated by a fit that did not see its own group (e.g. groups = reviewer ids), so the
  confidences of an evaluation are not fitted on themselves.
After calibration, among predictions with confidence >= c, about c % are exactly right.

How: isotonic regression of exact-correctness (0/1) on the raw confidence (scikit-learn's
IsotonicRegression, increasing, clipped outside the fitted range), stored as its breakpoints
and applied by linear interpolation. The breakpoints are computed the way the estimator's fit
computes them, without its per-call validation (`_isotonic_breakpoints`): an evaluation makes
about a hundred fits (five folds and one full fit per dimension and kind), and the estimator's
overhead was a tenth of an evaluation's time (issue 28). With fewer than MIN_ROWS rows, or a
single distinct raw value, there is nothing to learn a shape from: the fit is the constant
observed accuracy when there are rows at all, the identity when there are none.

Also here, for the spec's coverage-accuracy curve: coverage_accuracy_curve(confidence, correct)
gives, for each threshold 0..100, the share of targets whose prediction survives (coverage)
and the share of those that are exactly right (accuracy).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.isotonic import IsotonicRegression, isotonic_regression

MIN_ROWS = 30
FOLDS_WHEN_ONE_GROUP = 5


@dataclass(frozen=True)
class Calibration:
    """A monotone map raw confidence -> chance of being exactly right (x 100).

    ``x`` and ``y`` are breakpoints (raw 0-100, calibrated 0-100) joined linearly; empty means
    the identity. ``n`` is the number of predictions it was fitted on."""

    x: tuple[float, ...] = ()
    y: tuple[float, ...] = ()
    n: int = 0
    kind: str = field(default="identity")

    def apply(self, raw_confidence: Sequence[float] | np.ndarray) -> np.ndarray:
        raw = np.asarray(raw_confidence, dtype=float)
        if not self.x:
            out = raw
        else:
            out = np.interp(raw, np.asarray(self.x), np.asarray(self.y))
        return np.clip(np.rint(out), 0, 100).astype(int)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "x": list(self.x), "y": list(self.y), "n": self.n}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        kind = str(data.get("kind", "identity"))
        if kind not in ("identity", "isotonic", "constant"):
            raise ValueError(
                f"calibration kind must be identity, isotonic or constant; got {kind!r}"
            )
        x = tuple(float(v) for v in data.get("x", ()))
        y = tuple(float(v) for v in data.get("y", ()))
        if len(x) != len(y):
            raise ValueError(f"calibration x and y differ in length ({len(x)} != {len(y)})")
        return cls(x=x, y=y, n=int(data.get("n", 0)), kind=kind if x else "identity")


def _arrays(
    raw_confidence: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    raw = np.asarray(raw_confidence, dtype=float)
    hit = np.asarray(correct, dtype=float)
    if raw.shape != hit.shape or raw.ndim != 1:
        raise ValueError(
            f"raw_confidence and correct must be flat and of one length; got {raw.shape} "
            f"and {hit.shape}"
        )
    keep = ~np.isnan(raw)
    return raw[keep], hit[keep]


def fit_calibration(
    raw_confidence: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray
) -> Calibration:
    raw, hit = _arrays(raw_confidence, correct)
    if len(raw) == 0:
        return Calibration()
    if len(raw) < MIN_ROWS or len(np.unique(raw)) < 2:
        accuracy = 100.0 * float(hit.mean())
        return Calibration(x=(0.0, 100.0), y=(accuracy, accuracy), n=len(raw), kind="constant")
    x, y = _isotonic_breakpoints(raw, hit)
    y = 100.0 * y
    return Calibration(
        x=tuple(round(float(v), 4) for v in x),
        y=tuple(round(float(v), 4) for v in y),
        n=len(raw),
        kind="isotonic",
    )


def _isotonic_breakpoints(raw: np.ndarray, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`IsotonicRegression(y_min=0, y_max=1, increasing=True).fit(raw, hit)`'s X_thresholds_
    and y_thresholds_, the same arrays: the hits averaged per distinct raw value (weighted by
    its count), scikit-learn's `isotonic_regression` of those averages, then the inner points
    equal to both neighbours dropped. The estimator merges raw values closer than float
    resolution; raw confidences are whole numbers, and any others are left to the estimator."""
    x, position, counts = np.unique(raw, return_inverse=True, return_counts=True)
    if len(x) > 1 and np.min(np.diff(x)) < np.finfo(float).resolution:
        model = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        model.fit(raw, hit)
        return np.asarray(model.X_thresholds_, float), np.asarray(model.y_thresholds_, float)
    weights = counts.astype(float)
    means = np.bincount(position, weights=hit, minlength=len(x)) / weights
    y = isotonic_regression(means, sample_weight=weights, y_min=0.0, y_max=1.0, increasing=True)
    keep = np.ones(len(y), dtype=bool)
    keep[1:-1] = (y[1:-1] != y[:-2]) | (y[1:-1] != y[2:])
    return x[keep], y[keep]


def cross_fit_confidence(
    raw_confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    groups: Sequence[int] | np.ndarray,
) -> np.ndarray:
    """Calibrated confidences, each row by a fit on the other groups' rows only. With a single
    group, rows are split into FOLDS_WHEN_ONE_GROUP folds by position instead."""
    raw = np.asarray(raw_confidence, dtype=float)
    hit = np.asarray(correct, dtype=float)
    group = np.asarray(groups)
    if not (len(raw) == len(hit) == len(group)):
        raise ValueError(
            f"raw_confidence, correct and groups differ in length "
            f"({len(raw)}, {len(hit)}, {len(group)})"
        )
    out = np.zeros(len(raw), dtype=int)
    if len(raw) == 0:
        return out
    labels = np.unique(group)
    if len(labels) < 2:
        group = np.arange(len(raw)) % FOLDS_WHEN_ONE_GROUP
        labels = np.unique(group)
    for label in labels:
        inside = group == label
        fit = fit_calibration(raw[~inside], hit[~inside])
        out[inside] = fit.apply(raw[inside])
    return out


def coverage_accuracy_curve(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    thresholds: Sequence[int] | None = None,
) -> list[dict[str, float | int | None]]:
    """For each threshold t (default 0, 1, ..., 100): predictions with confidence >= t are kept.

    Rows: {"threshold", "kept", "coverage" (kept / all), "accuracy" (exactly right / kept, None
    when nothing is kept)}. ``confidence`` is one value per target (NaN or a missing value
    counts as never kept); ``correct`` says whether that target's prediction is exactly right.
    """
    conf = np.asarray(confidence, dtype=float)
    hit = np.asarray(correct, dtype=bool)
    if conf.shape != hit.shape:
        raise ValueError(f"confidence and correct differ in shape ({conf.shape} != {hit.shape})")
    total = len(conf)
    steps = list(range(101)) if thresholds is None else [int(t) for t in thresholds]
    known = ~np.isnan(conf)
    order = np.sort(conf[known])
    hits_sorted = hit[known][np.argsort(conf[known], kind="stable")]
    # hits among rows with confidence >= t = suffix sums over the sorted confidences
    suffix = np.concatenate([np.cumsum(hits_sorted[::-1])[::-1], [0]])
    rows: list[dict[str, float | int | None]] = []
    for t in steps:
        start = int(np.searchsorted(order, t, side="left"))
        kept = len(order) - start
        right = int(suffix[start])
        rows.append(
            {
                "threshold": t,
                "kept": kept,
                "coverage": kept / total if total else None,
                "accuracy": right / kept if kept else None,
            }
        )
    return rows
