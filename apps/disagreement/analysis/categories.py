"""Category levels: scores that name a kind of idea rather than a grade of it.

PBIG's 0 on need validity and market size means "not a B2B product". Averaging it with grades
1-3 treats "not our kind of product" as "a very weak one", so by default the ordinal analyses
leave category levels out (like gated ratings) and this module reports, per scope and
dimension, how many category answers there were and how often reviewers split between the
category and a grade on the same idea: the disagreement the ordinal figures no longer see.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .alpha import alpha_from_counts

ALL = "__all__"


def analysis_scores(
    frame: pd.DataFrame,
    *,
    categories: Mapping[str, Sequence[float]] | None = None,
    include_categories: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """(given, analysed) score arrays, NaN where missing.

    ``given``: every score a reviewer gave (gated, declined and not-answered rows are NaN
    whatever their score field says). ``analysed``: the same, with category levels turned to
    NaN unless ``include_categories``.
    """
    given = pd.to_numeric(frame["score"], errors="raise").to_numpy(dtype=float, na_value=np.nan)
    if "status" in frame.columns:
        given = np.where(frame["status"].to_numpy() == "scored", given, np.nan)
    analysed = given
    if categories and not include_categories:
        analysed = np.where(category_mask(frame, given, categories), np.nan, given)
    return given, analysed


def category_mask(
    frame: pd.DataFrame, score: np.ndarray, categories: Mapping[str, Sequence[float]]
) -> np.ndarray:
    """True where the row's score is a category level of its dimension."""
    dim_text = frame["dimension"].astype(str).to_numpy()
    mask = np.zeros(len(frame), dtype=bool)
    for dim, levels in categories.items():
        if levels:
            mask |= (dim_text == str(dim)) & np.isin(score, np.asarray(list(levels), float))
    return mask


def _level(v: float) -> int | float:
    return int(v) if float(v).is_integer() else float(v)


def category_report(
    given: np.ndarray,
    *,
    ideas: pd.DataFrame,
    dims: list[str],
    ic: np.ndarray,
    dc: np.ndarray,
    idea_dom: np.ndarray,
    domains: list[str],
    categories: Mapping[str, Sequence[float]],
    top: int = 200,
) -> dict:
    """How often category levels were given, and how often reviewers split on them.

    Per (scope, dimension) with category levels: ``n_scores`` (all scores given, categories
    included), ``n_category``, ``n_items`` (ideas with at least two scores), ``n_items_split``
    (some reviewers chose the category, others a grade), ``n_items_all_category`` (everyone chose
    the category), ``share_split`` (n_items_split / n_items, None without items) and
    ``alpha_category``: nominal Krippendorff alpha of "category or grade" over those ideas (None
    when undefined, e.g. nobody chose the category). ``split_ideas`` lists the split ideas, the
    most evenly split first.
    """
    levels = {
        d: sorted({_level(v) for v in categories.get(d, [])}) for d in dims if categories.get(d)
    }
    scopes: list[dict] = []
    split_ideas: list[dict] = []
    n_idea = len(ideas)
    titles = (
        ideas["title"].astype(str).to_numpy()
        if "title" in ideas.columns
        else ideas["idea"].astype(str).to_numpy()
    )
    for dim, lv in levels.items():
        d = dims.index(dim)
        idx = np.flatnonzero((dc == d) & np.isfinite(given))
        is_cat = np.isin(given[idx], np.asarray(lv, float))
        n_all = np.bincount(ic[idx], minlength=n_idea)
        n_cat = np.bincount(ic[idx], weights=is_cat, minlength=n_idea).astype(np.int64)
        multi = n_all >= 2
        split = multi & (n_cat > 0) & (n_cat < n_all)
        rated_doms = sorted(set(idea_dom[ic[idx]].tolist())) if len(idx) else []
        for scope, k in [(domains[k], k) for k in rated_doms] + [(ALL, None)]:
            in_scope = np.ones(n_idea, bool) if k is None else idea_dom == k
            m = multi & in_scope
            counts = np.stack([n_all[m] - n_cat[m], n_cat[m]], axis=1).astype(np.float64)
            alpha = alpha_from_counts(counts, np.array([0.0, 1.0]), "nominal") if m.any() else None
            n_items = int(m.sum())
            n_split = int((split & in_scope).sum())
            scopes.append(
                {
                    "domain": scope,
                    "dimension": dim,
                    "levels": lv,
                    "n_scores": int(n_all[in_scope].sum()),
                    "n_category": int(n_cat[in_scope].sum()),
                    "n_items": n_items,
                    "n_items_split": n_split,
                    "n_items_all_category": int((m & (n_cat == n_all)).sum()),
                    "share_split": n_split / n_items if n_items else None,
                    "alpha_category": alpha if alpha is not None and math.isfinite(alpha) else None,
                }
            )
        rows_by_idea = pd.Series(given[idx]).groupby(ic[idx])
        for i in np.flatnonzero(split).tolist():
            grades = sorted(_level(v) for v in rows_by_idea.get_group(i).tolist() if v not in lv)
            split_ideas.append(
                {
                    "idea_id": int(ideas["idea_id"].iat[i]),
                    "idea": str(ideas["idea"].iat[i]),
                    "title": str(titles[i]),
                    "domain": str(ideas["domain"].iat[i]),
                    "dimension": dim,
                    "n_category": int(n_cat[i]),
                    "n_grades": int(n_all[i] - n_cat[i]),
                    "grades": grades,
                }
            )
    # Most evenly split first (0, 3, 0 before 0, 3, 3, 3, 3), then more voices, then by id.
    split_ideas.sort(
        key=lambda r: (
            -min(r["n_category"], r["n_grades"]) / (r["n_category"] + r["n_grades"]),
            -(r["n_category"] + r["n_grades"]),
            r["idea_id"],
            dims.index(r["dimension"]),
        )
    )
    return {"levels": levels, "scopes": scopes, "split_ideas": split_ideas[:top]}
