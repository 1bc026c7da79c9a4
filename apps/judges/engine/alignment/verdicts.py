"""Verdicts: "well" / "partly" / "not_yet" from alpha, its bootstrap interval, n and coverage
(thresholds documented in docs/judges.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from apps.disagreement.analysis.bootstrap import bootstrap_alpha as _bootstrap_alpha
from apps.judges.engine import level as levels
from apps.judges.engine.alignment.figures import (
    _baseline,
    _clean,
    _values,
    frame_groups,
    judge_vs_truth_alpha,
)

# A judge "reproduces" a reviewer when its alpha reaches Krippendorff's threshold for tentative
# conclusions (0.667) with an interval that stays clear of chance-level agreement, over enough
# items and most of them. See docs/judges.md, "Verdicts".
VERDICT_MIN_N = levels.MIN_N
VERDICT_WELL_ALPHA = 0.667
VERDICT_WELL_LOWER = 0.4
VERDICT_PARTLY_ALPHA = 0.4
VERDICT_MIN_COVERAGE = 0.8
VERDICT_LABELS = {"well": "reproduces well", "partly": "partly", "not_yet": "not yet"}
# The rule in words, as the alignment page states it (the one home of its wording).
VERDICT_RULE = (
    f"reproduces well: per-reviewer alpha ≥ {VERDICT_WELL_ALPHA} with its 95 % bootstrap "
    f"interval above {VERDICT_WELL_LOWER} and coverage ≥ {100 * VERDICT_MIN_COVERAGE:.0f} %; "
    f"partly: alpha ≥ {VERDICT_PARTLY_ALPHA}; not yet: lower, or fewer than {VERDICT_MIN_N} kept "
    "predictions. Then the lift over the level-only baseline (the mean of the judge's "
    "examples) on the same targets: a lift of +0.00 or less means the judge adds nothing "
    "beyond the reviewer's usual level (not yet, whatever its alpha); a positive lift whose "
    "interval reaches 0 means it is not shown to beat the level (at most partly); a lift "
    "whose interval is above 0 leaves the verdict as it is."
)


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

    The rule (VERDICT_RULE, stated on the alignment page): first from alpha, its interval, n
    and coverage; then the lift over the level-only baseline (engine.level.lift_status) on the
    same targets: a nil lift (at most +0.00) makes it "not yet" and says the judge adds nothing
    beyond the level; a positive lift whose interval reaches 0 caps it at "partly" and says the
    judge is not shown to beat the level (never "adds nothing": its numbers say otherwise); a
    lift with its interval above 0 changes nothing."""
    base = {"alpha": alpha_value, "low": low, "high": high, "n": n, "coverage": coverage}
    if lift is not None:
        base.update(
            {
                key: lift.get(key)
                for key in (
                    "baseline_alpha",
                    "lift",
                    "lift_low",
                    "lift_high",
                    "adds_nothing",
                    "lift_status",
                    "n_departs",
                )
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
    status = None if lift is None else levels.lift_status(lift.get("lift"), lift.get("lift_low"))
    if lift is not None and status in (levels.NIL, levels.UNPROVEN):
        said = levels.lift_sentence(
            lift.get("lift"),
            lift.get("lift_low"),
            lift.get("lift_high"),
            n_departs=lift.get("n_departs"),
            n=lift.get("n_baseline"),
        )
        if status == levels.NIL:
            level, why = "not_yet", said
        elif level == "well":
            level, why = "partly", said
        else:
            why = f"{why}; {said}"
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
    for (reviewer_id, dimension), rg in frame_groups(g, ["reviewer_id", "dimension"]):
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


def verdict_again(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored verdict with its level and reason derived again from its own figures, so a
    snapshot computed under an earlier wording of the rule shows verdicts that match their
    numbers (the figures are kept as they are)."""
    lift = None
    if "lift" in stored:
        lift = {
            key: stored.get(key)
            for key in ("baseline_alpha", "lift", "lift_low", "lift_high", "n_departs")
        }
        lift["n_baseline"] = stored.get("n")
        lift["lift_status"] = levels.lift_status(lift["lift"], lift["lift_low"])
        lift["adds_nothing"] = lift["lift_status"] == levels.NIL
    again = verdict(
        alpha_value=stored.get("alpha"),
        low=stored.get("low"),
        high=stored.get("high"),
        n=int(stored.get("n") or 0),
        coverage=float(stored.get("coverage") or 0.0),
        lift=lift,
    )
    return {**stored, **again}
