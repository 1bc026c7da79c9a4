"""Strictness (how high a reviewer scores) and within-reviewer standardised scores."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def standardise_within(
    frame: pd.DataFrame,
    by: Sequence[str] = ("reviewer", "dimension"),
    score_col: str = "score",
) -> pd.Series:
    """z = (score - group mean) / group std (sample std, ddof=1) within each group.

    A reviewer who used a single value on a dimension (std 0) or scored one item (std
    undefined) gets z = 0: no evidence they think the item is better or worse than their
    norm. Missing scores stay missing.
    """
    grouped = frame.groupby(list(by), sort=False, dropna=False)[score_col]
    mean = grouped.transform("mean")
    std = grouped.transform("std")
    z = (frame[score_col] - mean) / std
    flat = (std == 0) | std.isna()
    z = z.mask(flat & frame[score_col].notna(), 0.0)
    return z.rename("z")


def reviewer_strictness(
    frame: pd.DataFrame,
    *,
    reviewer_col: str = "reviewer",
    group_cols: Sequence[str] = ("dimension",),
    score_col: str = "score",
) -> pd.DataFrame:
    """Per reviewer and group: mean, std (ddof=1; NaN with one score) and n of scored items."""
    scored = frame[frame[score_col].notna()]
    out = (
        scored.groupby([*group_cols, reviewer_col], sort=True)[score_col]
        .agg(mean="mean", std="std", n="count")
        .reset_index()
    )
    return out


def strictness_spread(means: pd.Series) -> dict:
    """Spread of per-reviewer means: sd (ddof=1; None with < 2 reviewers), min, max, count."""
    means = means.dropna()
    n = int(len(means))
    return {
        "sd_of_means": float(means.std()) if n >= 2 else None,
        "min_mean": float(means.min()) if n else None,
        "max_mean": float(means.max()) if n else None,
        "n_reviewers": n,
    }
