"""Verdicts: "well" / "partly" / "not_yet" from alpha, its bootstrap interval, n and coverage
(thresholds documented in docs/judges.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from apps.disagreement.analysis.bootstrap import bootstrap_alpha as _bootstrap_alpha
from apps.judges.engine import level as levels
from apps.judges.engine.alignment.figures import _baseline, _clean, _values, judge_vs_truth_alpha

# A judge "reproduces" a reviewer when its alpha reaches Krippendorff's threshold for tentative
# conclusions (0.667) with an interval that stays clear of chance-level agreement, over enough
# items and most of them. See docs/judges.md, "Verdicts".
VERDICT_MIN_N = levels.MIN_N
VERDICT_WELL_ALPHA = 0.667
VERDICT_WELL_LOWER = 0.4
VERDICT_PARTLY_ALPHA = 0.4
VERDICT_MIN_COVERAGE = 0.8
VERDICT_LABELS = {"well": "reproduces well", "partly": "partly", "not_yet": "not yet"}


def verdict(
    *,
    alpha_value: float | None,
    low: float | None,
    high: float | None,
    n: int,
    coverage: float,
    lift: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One plain verdict ("well", "partly", "not_yet") with the sentence that justifies it.

    ``alpha_value`` is the per-reviewer alpha (one reviewer's targets); ``lift`` the judge's
    lift over the level-only baseline on them (engine.level): a judge that does not beat the
    baseline is "not yet" whatever its alpha, and says it adds nothing."""
    base = {"alpha": alpha_value, "low": low, "high": high, "n": n, "coverage": coverage}
    if lift is not None:
        base.update(
            {
                key: lift.get(key)
                for key in ("baseline_alpha", "lift", "lift_low", "lift_high", "adds_nothing")
            }
        )
    if n < VERDICT_MIN_N or alpha_value is None:
        why = (
            f"only {n} kept prediction{'s' if n != 1 else ''} (at least {VERDICT_MIN_N} needed)"
            if n < VERDICT_MIN_N
            else "alpha is undefined (the scores do not vary)"
        )
        return {**base, "level": "not_yet", "label": VERDICT_LABELS["not_yet"], "reason": why}
    if (
        alpha_value >= VERDICT_WELL_ALPHA
        and low is not None
        and low >= VERDICT_WELL_LOWER
        and coverage >= VERDICT_MIN_COVERAGE
    ):
        level, why = "well", f"alpha and its interval above {VERDICT_WELL_LOWER}"
    elif alpha_value >= VERDICT_PARTLY_ALPHA:
        level = "partly"
        if coverage < VERDICT_MIN_COVERAGE:
            why = f"keeps a prediction for only {coverage:.0%} of the items"
        elif alpha_value >= VERDICT_WELL_ALPHA and low is None:
            why = "its interval is undefined"
        elif alpha_value >= VERDICT_WELL_ALPHA:
            why = f"the interval reaches down to {low:.2f}"
        else:
            why = f"alpha below {VERDICT_WELL_ALPHA}"
    else:
        level, why = "not_yet", f"alpha below {VERDICT_PARTLY_ALPHA}"
    if lift is not None and lift.get("adds_nothing"):
        level = "not_yet"
        why = levels.lift_sentence(lift.get("lift"), lift.get("lift_low"), lift.get("lift_high"))
    return {**base, "level": level, "label": VERDICT_LABELS[level], "reason": why}


def reviewer_verdicts(
    finals: pd.DataFrame,
    *,
    scales: dict[str, tuple[int, int]],
    kind: str = "personalized",
    n_boot: int = 500,
) -> list[dict[str, Any]]:
    """Per reviewer and dimension: the verdict on their `kind` judge at its largest k."""
    g = finals[finals["kind"] == kind].dropna(subset=["truth"])
    if g.empty:
        return []
    g = g[g["k"] == g.groupby(["reviewer_id", "dimension"])["k"].transform("max")]
    out = []
    for (reviewer_id, dimension), rg in g.groupby(["reviewer_id", "dimension"], sort=True):
        values = _values(scales, str(dimension))
        a, n = judge_vs_truth_alpha(rg, values)
        low = high = None
        if a is not None and n >= VERDICT_MIN_N and _bootstrap_alpha is not None:
            data = np.vstack([rg["truth"].to_numpy(float), rg["pred"].to_numpy(float)])
            lo_, hi_ = _bootstrap_alpha(data, "ordinal", values, n_boot=n_boot, seed=0)
            low, high = _clean(lo_), _clean(hi_)
        coverage = n / len(rg) if len(rg) else 0.0
        lift = _baseline(rg, values) if n >= VERDICT_MIN_N else None
        out.append(
            {
                "reviewer_id": int(reviewer_id),
                "dimension": str(dimension),
                "kind": kind,
                "k": int(rg["k"].iloc[0]),
                **verdict(alpha_value=a, low=low, high=high, n=n, coverage=coverage, lift=lift),
            }
        )
    return out
