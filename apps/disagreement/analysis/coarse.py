"""Coarse agreement: do reviewers pick the same strong ideas, whatever their scale?

A reviewer's above-median set on a dimension is the items they scored strictly above their
own median on that dimension. The median is taken over all items the reviewer scored in the
scope being analysed (not only the items they share with a given colleague), so a reviewer's
set does not change from one pair to the next. Items exactly at the median are not above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd


def above_median_flags(
    frame: pd.DataFrame,
    *,
    reviewer_col: str = "reviewer",
    score_col: str = "score",
    group_cols: Sequence[str] = ("dimension",),
) -> pd.Series:
    """True where the row's score is strictly above that reviewer's median in its group.

    Rows with a missing score are False (and do not count towards the median).
    """
    keys = [reviewer_col, *group_cols]
    medians = frame.groupby(keys, sort=False, dropna=False)[score_col].transform("median")
    return (frame[score_col] > medians).fillna(False).astype(bool)


def above_median_sets(
    frame: pd.DataFrame,
    *,
    reviewer_col: str = "reviewer",
    item_col: str = "idea_id",
    score_col: str = "score",
    group_cols: Sequence[str] = ("dimension",),
) -> dict[tuple, set]:
    """{(reviewer, *group values): set of items above that reviewer's median}.

    Every reviewer with at least one scored item gets an entry (possibly an empty set).
    """
    scored = frame[frame[score_col].notna()]
    flags = above_median_flags(
        scored, reviewer_col=reviewer_col, score_col=score_col, group_cols=group_cols
    )
    keys = [reviewer_col, *group_cols]
    out: dict[tuple, set] = {}
    for key, sub in scored.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        out[key] = set(sub.loc[flags.loc[sub.index], item_col])
    return out


def jaccard(a: set, b: set) -> float | None:
    """|a & b| / |a | b|; None when the union is empty (undefined, not zero)."""
    union = len(a | b)
    if union == 0:
        return None
    return len(a & b) / union


def coarse_agreement(
    frame: pd.DataFrame,
    *,
    min_co_rated: int = 10,
    reviewer_col: str = "reviewer",
    item_col: str = "idea_id",
    score_col: str = "score",
) -> dict:
    """Mean pairwise Jaccard of above-median sets for ONE scope and dimension.

    This is the readable reference version (sets and loops) of what compute_metrics does
    with arrays; the tests hold the two to the same answers. ``frame`` holds one dimension.
    Returns {"jaccard", "n_pairs", "n_pairs_empty_union", "pairs": {(a, b): jaccard|None}}.
    """
    scored = frame[frame[score_col].notna()]
    sets = {
        key[0]: items
        for key, items in above_median_sets(
            scored,
            reviewer_col=reviewer_col,
            item_col=item_col,
            score_col=score_col,
            group_cols=(),
        ).items()
    }
    rated: dict[Any, set] = {
        r: set(sub[item_col]) for r, sub in scored.groupby(reviewer_col, sort=True)
    }
    pairs: dict[tuple, float | None] = {}
    empty = 0
    for a, b in combinations(sorted(rated), 2):
        shared = rated[a] & rated[b]
        if len(shared) < min_co_rated:
            continue
        value = jaccard(sets[a] & shared, sets[b] & shared)
        pairs[(a, b)] = value
        if value is None:
            empty += 1
    values = [v for v in pairs.values() if v is not None]
    return {
        "jaccard": float(np.mean(values)) if values else None,
        "n_pairs": len(values),
        "n_pairs_empty_union": empty,
        "pairs": pairs,
    }
