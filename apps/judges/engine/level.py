"""Figures that separate a judge's judgment from its matching of levels (pure; no Django).

Why: pooled alpha (paper 001's figure: every reviewer's targets in one reliability table)
rewards a judge that only predicts each reviewer's usual level, because reviewers' levels
differ. Two figures tell level from judgment (docs/metrics-definitions.md):

- per-reviewer alpha: alpha between the judge and one reviewer over that reviewer's targets
  only, so the reviewer's level is shared by every unit and cannot help; the figure of a
  configuration is the mean over reviewers with at least MIN_N kept predictions and a defined
  alpha. It asks whether the judge orders ideas like the reviewer;
- the level-only baseline: the mean of the k examples the judge was given (rounded), on the
  same targets; the judge's *lift* is its pooled alpha minus the baseline's, with a paired
  bootstrap interval (the same resampled targets for both).

The lift in words (``lift_status``, the one home of the rule the verdicts and pages use):
- ``nil``: the lift is at most +0.00 as shown (below LIFT_NIL): the judge *adds nothing*
  beyond the reviewer's usual level;
- ``unproven``: the lift is positive but its interval reaches 0: the judge *is not shown* to
  beat the level. It is not "adds nothing": the point estimate says it adds something, the
  data cannot yet rule out that it does not;
- ``shown``: the interval's lower bound is above 0: the judge beats the level.

Why many lower bounds are exactly 0 (not a clipping): where the judge predicts the baseline's
level on most targets and departs from it on a few (``n_departs``), every resample that draws
none of those few has identical judge and baseline values, so its lift is exactly 0. When more
than 2.5 % of the resamples are such (3 departures out of 14 targets: (11/14)^14 = 3.4 %), the
percentile interval's lower bound is exactly 0. The figure is right; the pages say how many
targets the lift rests on.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from apps.disagreement.analysis.alpha import count_matrix, value_domain, value_index
from apps.disagreement.analysis.bootstrap import (
    UnitContributions,
    bootstrap_samples_of_kinds,
    percentile_interval,
)

MIN_N = 8  # kept predictions a reviewer needs for a per-reviewer alpha (the verdicts' minimum)
N_BOOT = 300
ADDS_NOTHING = "adds nothing beyond the reviewer's usual level"
NOT_SHOWN = "not shown to beat the reviewer's usual level"
# A lift below this shows as +0.00 (or below) on the pages: nothing added.
LIFT_NIL = 0.005
NIL, UNPROVEN, SHOWN = "nil", "unproven", "shown"


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) or math.isinf(x) else float(x)


def _contributions(truth: np.ndarray, pred: np.ndarray, domain: np.ndarray) -> UnitContributions:
    n = len(truth)
    units = np.concatenate([np.arange(n), np.arange(n)])
    idx = value_index(np.concatenate([truth, pred]), domain)
    counts = count_matrix(units, idx, n, len(domain))
    if hasattr(counts, "toarray"):
        counts = counts.toarray()
    return UnitContributions(counts, domain, "ordinal")


def paired_alphas(
    truth: np.ndarray,
    pred: np.ndarray,
    base: np.ndarray,
    values: list[float] | None,
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> dict[str, Any]:
    """Alpha of the judge and of the level-only baseline against the truth on the same units
    (those where both have a value), and the lift with its paired bootstrap interval."""
    t, p, b = (np.asarray(x, dtype=float) for x in (truth, pred, base))
    keep = ~(np.isnan(t) | np.isnan(p) | np.isnan(b))
    t, p, b = t[keep], p[keep], b[keep]
    n = int(len(t))
    out: dict[str, Any] = {
        "n_baseline": n,
        "judge_alpha": None,
        "baseline_alpha": None,
        "lift": None,
        "lift_low": None,
        "lift_high": None,
        "n_departs": None,
    }
    if n < 2:
        return out
    # Targets where the judge says something other than the level-only baseline: the lift
    # rests on these alone (elsewhere the two are the same prediction).
    out["n_departs"] = int(np.count_nonzero(p != b))
    domain = value_domain(np.concatenate([t, p, b]), values)
    # Targets repeat: on a rubric's scale there are a few hundred (truth, judge, baseline)
    # triples at most, however many targets. Each triple is one unit of the sums, weighted by
    # how many targets have it, and the bootstrap draws how many of each (a cell of the overall
    # alignment at a million ratings has 166,600 targets).
    width = len(domain)
    triple = (value_index(t, domain) * width + value_index(p, domain)) * width + value_index(
        b, domain
    )
    _, first, n_of_triple = np.unique(triple, return_index=True, return_counts=True)
    cj = _contributions(t[first], p[first], domain)
    cb = _contributions(t[first], b[first], domain)
    every_target = n_of_triple[None, :].astype(np.float64)
    judge, baseline = float(cj.alphas(every_target)[0]), float(cb.alphas(every_target)[0])
    out["judge_alpha"], out["baseline_alpha"] = _finite(judge), _finite(baseline)
    if out["judge_alpha"] is None or out["baseline_alpha"] is None:
        return out
    out["lift"] = judge - baseline
    if n >= MIN_N:
        sj, sb = bootstrap_samples_of_kinds([cj, cb], n_of_triple, n_boot, seed)
        low, high = percentile_interval(sj - sb)
        out["lift_low"], out["lift_high"] = _finite(low), _finite(high)
    return out


def lift_status(lift: float | None, lift_low: float | None) -> str | None:
    """``nil``, ``unproven`` or ``shown`` (see the module docstring); None without a lift."""
    if lift is None:
        return None
    if lift < LIFT_NIL:
        return NIL
    if lift_low is None or lift_low <= 0:
        return UNPROVEN
    return SHOWN


def adds_nothing(lift: float | None, lift_low: float | None) -> bool:
    """True when the lift is nil (at most +0.00 as shown). A positive lift whose interval
    reaches 0 is not "adds nothing": it is ``unproven`` (``lift_status``)."""
    return lift_status(lift, lift_low) == NIL


def reviewer_alphas(
    group: pd.DataFrame, values: list[float] | None, alpha_fn: Any
) -> dict[int, tuple[float | None, int]]:
    """(alpha, kept predictions) per reviewer of one configuration cell: the units of the
    per-reviewer figure. ``alpha_fn(data, values=...)`` is the alignment's alpha."""
    out: dict[int, tuple[float | None, int]] = {}
    # As arrays (a frame's groupby and dropna per cell were most of a report's time): each
    # reviewer's rows in the frame's order, those with both a truth and a prediction.
    reviewer = group["reviewer_id"].to_numpy()
    truth, pred = group["truth"].to_numpy(float), group["pred"].to_numpy(float)
    by_reviewer = np.argsort(reviewer, kind="stable")
    ids, starts = np.unique(reviewer[by_reviewer], return_index=True)
    ends = [*starts[1:], len(by_reviewer)]
    for reviewer_id, start, end in zip(ids.tolist(), starts.tolist(), ends, strict=True):
        rows = by_reviewer[start:end]
        t, p = truth[rows], pred[rows]
        both = ~(np.isnan(t) | np.isnan(p))
        n = int(np.count_nonzero(both))
        a = alpha_fn(np.vstack([t[both], p[both]]), values=values) if n >= 2 else None
        out[int(reviewer_id)] = (a, n)
    return out


def per_reviewer_figure(alphas: dict[int, tuple[float | None, int]]) -> tuple[float | None, int]:
    """Mean per-reviewer alpha over reviewers with at least MIN_N kept predictions and a
    defined alpha, and how many reviewers that is."""
    usable = [a for a, n in alphas.values() if a is not None and n >= MIN_N]
    if not usable:
        return None, 0
    return float(np.mean(usable)), len(usable)


def lift_sentence(
    lift: float | None,
    low: float | None,
    high: float | None,
    *,
    n_departs: int | None = None,
    n: int | None = None,
) -> str:
    """The lift in words, for tables and verdict reasons (the rule of ``lift_status``)."""
    if lift is None:
        return "no level-only baseline (no examples, or too few targets)"
    interval = f" [{low:+.2f}, {high:+.2f}]" if low is not None and high is not None else ""
    figure = f"lift {lift:+.2f}{interval} over the mean of its examples"
    departs = (
        f"; it departs from that level on {n_departs} of {n} targets"
        if n_departs is not None and n
        else ""
    )
    status = lift_status(lift, low)
    if status == NIL:
        return f"{ADDS_NOTHING} ({figure})"
    if status == UNPROVEN:
        why = "the interval reaches 0" if low is not None else "too few targets for an interval"
        return f"{NOT_SHOWN}: {why} ({figure}{departs})"
    return f"beats the level-only baseline by {lift:+.2f}{interval}{departs}"
