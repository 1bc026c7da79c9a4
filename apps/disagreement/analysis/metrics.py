"""compute_metrics: every disagreement figure the dashboards show, in one pass over a frame.

The frame is turned into integer codes once (reviewer, idea, dimension, domain); every
figure is then a handful of ``np.bincount`` calls over those codes. Reviewer pairs are built
once per dimension by a vectorised self-join on the idea, and every scope (domain or
"__all__") and background reuses them. One bootstrap weight matrix over all ideas serves every
cell (see bootstrap.py and docs/metrics-definitions.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .alpha import alpha_batch, alpha_from_counts, check_level, count_matrix
from .bootstrap import _BLOCK, UnitContributions, percentile_interval, resample_weights
from .categories import analysis_scores, category_report
from .contested import contested_ideas
from .panel import icc1_from_counts, k_needed, reliability_curve

ALL = "__all__"
REQUIRED_COLUMNS = (
    "idea_id",
    "idea",
    "domain",
    "reviewer_id",
    "reviewer",
    "background",
    "dimension",
    "score",
)
# Krippendorff's own lowest bar for drawing tentative conclusions from alpha.
ALPHA_AGREE = 0.667
# Random above-median picks overlap at a Jaccard near 0.3; 0.5 is clearly beyond chance.
JACCARD_AGREE = 0.5
# A mean Jaccard over fewer reviewer pairs than this is not read as a verdict: with 4 pairs one
# odd pair moves the mean by a quarter of its own deviation.
MIN_PAIRS_FOR_VERDICT = 10

READ_AGREE = "Reviewers agree."
READ_SCALES = "Reviewers use different scales but pick similar strong ideas."
READ_DISAGREE = "Reviewers disagree on which ideas are strong."
READ_SAME_SCORES_DIFFERENT_PICKS = "Reviewers give similar scores but pick different top ideas."
READ_TOO_LITTLE = "Too few pairs to judge."
READ_SCORES_AGREE_ONLY = "Reviewers give similar scores; too few pairs to compare top picks."
READ_SCORES_DIFFER_ONLY = "Reviewers score differently; too few pairs to compare top picks."


def reading(
    alpha: float | None,
    jaccard: float | None,
    n_items: int,
    n_pairs: int,
    min_co_rated: int = 10,
    min_pairs: int = MIN_PAIRS_FOR_VERDICT,
) -> str:
    """One plain-language sentence for a cell, from its alpha and Jaccard.

    Alpha speaks only with at least ``min_co_rated`` pairable ideas, Jaccard only with at least
    ``min_pairs`` reviewer pairs; below both the cell says "Too few pairs to judge."
    """
    has_alpha = alpha is not None and n_items >= min_co_rated
    has_jaccard = jaccard is not None and n_pairs >= min_pairs
    if not has_alpha and not has_jaccard:
        return READ_TOO_LITTLE
    if not has_jaccard:
        # has_alpha holds here; the None checks only tell the type checker what it implies.
        agree = alpha is not None and alpha >= ALPHA_AGREE
        return READ_SCORES_AGREE_ONLY if agree else READ_SCORES_DIFFER_ONLY
    high_j = jaccard is not None and jaccard >= JACCARD_AGREE
    if not has_alpha:
        return READ_SCALES if high_j else READ_DISAGREE
    if alpha is not None and alpha >= ALPHA_AGREE:
        return READ_AGREE if high_j else READ_SAME_SCORES_DIFFERENT_PICKS
    return READ_SCALES if high_j else READ_DISAGREE


def _num(x) -> float | None:
    """JSON-safe float: NaN and infinities become None."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _nums(arr: np.ndarray) -> list:
    return [v if math.isfinite(v) else None for v in np.asarray(arr, dtype=float).tolist()]


def _score_key(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _co_rated_pairs(item_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All (left, right) position pairs, left < right, within runs of equal items.

    ``item_sorted`` is sorted; a run of m rows yields m(m-1)/2 pairs, built without loops.
    """
    n = len(item_sorted)
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, item_sorted[1:] != item_sorted[:-1]])
    sizes = np.diff(np.r_[starts, n])
    run_end = np.repeat(starts + sizes, sizes)
    pos = np.arange(n)
    partners = run_end - pos - 1  # rows after me in my run
    total = int(partners.sum())
    left = np.repeat(pos, partners)
    first = np.cumsum(partners) - partners  # where my block starts in the output
    right = left + 1 + (np.arange(total) - np.repeat(first, partners))
    return left, right


def _compress(keys: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys, index of each key among them): np.unique without the sort when the
    key space is small enough to count densely."""
    if n_keys > 4 * len(keys) + 1_000_000:
        return np.unique(keys, return_inverse=True)
    seen = np.bincount(keys, minlength=n_keys) > 0
    distinct = np.flatnonzero(seen)
    rank = np.cumsum(seen) - 1
    return distinct, rank[keys]


def _medians_from_counts(vcounts: np.ndarray, cnt: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """Per-reviewer median from reviewer x value counts (average of the middle two)."""
    med = np.full(len(cnt), np.nan)
    has = cnt > 0
    if not has.any():
        return med
    cum = np.cumsum(vcounts[has], axis=1)
    lo = (cnt[has] - 1) // 2
    hi = cnt[has] // 2
    lo_val = vals[np.argmax(cum > lo[:, None], axis=1)]
    hi_val = vals[np.argmax(cum > hi[:, None], axis=1)]
    med[has] = (lo_val + hi_val) / 2.0
    return med


def compute_metrics(
    frame: pd.DataFrame,
    *,
    scales: Mapping[str, tuple[int, int]] | None = None,
    level: str = "ordinal",
    n_boot: int = 1000,
    seed: int = 0,
    min_co_rated: int = 10,
    top_contested: int = 200,
    categories: Mapping[str, Sequence[float]] | None = None,
    include_categories: bool = False,
) -> dict:
    """All disagreement metrics for a rating frame (see METRICS_SCHEMA / docs).

    ``categories`` ({dimension: [values]}, optional) lists score values that are categories
    rather than grades (PBIG: 0 = "not a B2B product" on need_validity and market_size). By
    default those scores are left out of every ordinal figure like gated ones, and the
    ``categories`` section reports how many there were and how often reviewers split between
    the category and a grade on the same idea. ``include_categories=True`` keeps them as the
    lowest point of the scale (the paper's Table 3); the section is reported either way.
    """
    check_level(level)
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"rating frame is missing column(s): {', '.join(missing)}")
    scales = dict(scales or {})

    given, score = analysis_scores(
        frame, categories=categories, include_categories=include_categories
    )
    scored = np.isfinite(score)

    # --- codes -------------------------------------------------------------------------
    reviewers = (
        frame[["reviewer_id", "reviewer", "background"]]
        .drop_duplicates("reviewer_id")
        .assign(
            reviewer=lambda d: d["reviewer"].astype(str),
            background=lambda d: d["background"].fillna("").astype(str),
        )
        .sort_values(["reviewer", "reviewer_id"], kind="stable")
        .reset_index(drop=True)
    )
    n_rev = len(reviewers)
    rc = pd.Index(reviewers["reviewer_id"]).get_indexer(frame["reviewer_id"])
    rev_name = reviewers["reviewer"].tolist()
    rev_id = [int(v) for v in reviewers["reviewer_id"].tolist()]
    rev_bg_arr = reviewers["background"].to_numpy()
    # Background is a free label: every non-empty one found is a group, after "everyone".
    groups = [ALL] + sorted({str(b) for b in rev_bg_arr.tolist() if str(b)})
    rev_in_bg = {b: (np.ones(n_rev, bool) if b == ALL else rev_bg_arr == b) for b in groups}

    idea_cols = ["idea_id", "idea", "domain"] + (["title"] if "title" in frame.columns else [])
    ideas = (
        frame[idea_cols]
        .drop_duplicates("idea_id")
        .assign(domain=lambda d: d["domain"].astype(str))
        .sort_values(["domain", "idea_id"], kind="stable")  # each domain a contiguous block
        .reset_index(drop=True)
    )
    n_idea = len(ideas)
    ic = pd.Index(ideas["idea_id"]).get_indexer(frame["idea_id"])
    domains = sorted(ideas["domain"].unique().tolist())
    idea_dom = pd.Index(domains).get_indexer(ideas["domain"]) if n_idea else np.zeros(0, int)
    dom_start = np.searchsorted(idea_dom, np.arange(len(domains)))
    dom_end = np.searchsorted(idea_dom, np.arange(len(domains)), side="right")

    present = pd.unique(frame["dimension"].astype(str)).tolist()
    dims = [d for d in scales if d in present] + sorted(d for d in present if d not in scales)
    dc = pd.Index(dims).get_indexer(frame["dimension"].astype(str)) if dims else rc * 0
    row_dom = idea_dom[ic] if len(ic) else np.zeros(0, int)

    cells, strictness, spread, pairwise, panel = [], [], [], [], []
    boot_jobs = []  # (cell dict, UnitContributions, column start, column end)

    for d, dim in enumerate(dims):
        in_dim = dc == d
        idx = np.flatnonzero(in_dim & scored)
        # Sorted by idea, hence by domain (ideas are coded domain by domain): every scope's
        # rows and pairs are then one contiguous slice, so scopes cost views, not copies.
        idx = idx[np.argsort(ic[idx], kind="stable")]
        x = score[idx]
        vals = np.unique(x)
        n_v = len(vals)
        vi = np.searchsorted(vals, x)
        r = rc[idx]
        i = ic[idx]
        dom = row_dom[idx]
        dom_with_rows = sorted(set(np.unique(row_dom[in_dim]).tolist()))
        scopes = [(domains[k], k) for k in dom_with_rows] + [(ALL, None)]

        # Reviewer pairs co-rating an idea on this dimension (self-join on idea, once).
        left, right = _co_rated_pairs(i)
        ra, rb = r[left], r[right]
        if (ra == rb).any():
            bad = int(np.flatnonzero(ra == rb)[0])
            raise ValueError(
                f"reviewer {rev_name[ra[bad]]!r} has two ratings of idea "
                f"{ideas['idea'].iat[i[left[bad]]]!r} on dimension {dim!r}"
            )
        swap = ra > rb
        ra, rb = np.where(swap, rb, ra), np.where(swap, ra, rb)
        left, right = np.where(swap, right, left), np.where(swap, left, right)
        pkey = ra.astype(np.int64) * n_rev + rb
        ukeys, inv = _compress(pkey, n_rev * n_rev)
        n_p = len(ukeys)
        pa, pb = ukeys // max(n_rev, 1), ukeys % max(n_rev, 1)
        pair_dom = dom[left]
        val_pair = vi[left] * n_v + vi[right]
        above = np.zeros(len(idx), dtype=bool)

        for scope, k in scopes:
            in_scope = (
                slice(0, len(idx))
                if k is None
                else slice(*np.searchsorted(dom, [k, k + 1]).tolist())
            )
            col0, col1 = (0, n_idea) if k is None else (int(dom_start[k]), int(dom_end[k]))
            rs, xs, vis = r[in_scope], x[in_scope], vi[in_scope]
            local = i[in_scope] - col0

            # Strictness and the reviewer's own median in this scope.
            cnt = np.bincount(rs, minlength=n_rev)
            tot = np.bincount(rs, weights=xs, minlength=n_rev)
            mean = np.divide(tot, cnt, out=np.full(n_rev, np.nan), where=cnt > 0)
            dev = np.bincount(rs, weights=(xs - mean[rs]) ** 2, minlength=n_rev)
            std = np.sqrt(np.divide(dev, cnt - 1, out=np.full(n_rev, np.nan), where=cnt > 1))
            vcounts = np.bincount(rs * n_v + vis, minlength=n_rev * n_v).reshape(n_rev, n_v)
            med = _medians_from_counts(vcounts, cnt, vals)
            above[in_scope] = xs > med[rs]
            lo, hi = scales.get(dim, (None, None))
            base_keys = (
                [str(s) for s in range(int(lo), int(hi) + 1)]
                if lo is not None and hi is not None
                else []
            )
            val_keys = [_score_key(v) for v in vals]
            for rv in np.flatnonzero(cnt > 0).tolist():
                counts = dict.fromkeys(base_keys, 0)
                for key, c in zip(val_keys, vcounts[rv].tolist(), strict=True):
                    if c or key not in counts:
                        counts[key] = counts.get(key, 0) + int(c)
                strictness.append(
                    {
                        "domain": scope,
                        "dimension": dim,
                        "reviewer": rev_name[rv],
                        "reviewer_id": rev_id[rv],
                        "background": str(rev_bg_arr[rv]),
                        "mean": float(mean[rv]),
                        "std": _num(std[rv]),
                        "n": int(cnt[rv]),
                        "counts": counts,
                    }
                )
            means = mean[cnt > 0]
            spread.append(
                {
                    "domain": scope,
                    "dimension": dim,
                    "sd_of_means": _num(means.std(ddof=1)) if len(means) >= 2 else None,
                    "min_mean": _num(means.min()) if len(means) else None,
                    "max_mean": _num(means.max()) if len(means) else None,
                    "n_reviewers": int(len(means)),
                }
            )

            # Pairwise alpha and Jaccard over co-rated ideas in this scope.
            psel = (
                slice(0, len(inv))
                if k is None
                else slice(*np.searchsorted(pair_dom, [k, k + 1]).tolist())
            )
            pinv = inv[psel]
            n_items = np.bincount(pinv, minlength=n_p)
            al, ar = above[left[psel]], above[right[psel]]
            inter = np.bincount(pinv, weights=al & ar, minlength=n_p)
            union = np.bincount(pinv, weights=al | ar, minlength=n_p)
            eligible = n_items >= min_co_rated
            jac = np.divide(inter, union, out=np.full(n_p, np.nan), where=eligible & (union > 0))
            listed = np.flatnonzero(n_items >= 2)
            if len(listed):
                where = np.full(n_p, -1, dtype=np.int64)
                where[listed] = np.arange(len(listed))
                sub = where[pinv]
                keep = sub >= 0
                cont = np.bincount(
                    sub[keep] * n_v * n_v + val_pair[psel][keep], minlength=len(listed) * n_v * n_v
                )
                cont = cont.reshape(len(listed), n_v, n_v).astype(np.float64)
                pair_alpha = alpha_batch(cont + cont.transpose(0, 2, 1), vals, level)
                for a_, b_, a_alpha, n_it, j in zip(
                    pa[listed].tolist(),
                    pb[listed].tolist(),
                    _nums(pair_alpha),
                    n_items[listed].tolist(),
                    _nums(jac[listed]),
                    strict=True,
                ):
                    pairwise.append(
                        {
                            "domain": scope,
                            "dimension": dim,
                            "reviewer_a": rev_name[a_],
                            "reviewer_b": rev_name[b_],
                            "alpha": a_alpha,
                            "n_items": int(n_it),
                            "jaccard": j,
                        }
                    )

            panel_entry: dict[str, Any] | None = None
            for bg in groups:
                in_bg = rev_in_bg[bg][rs]
                counts_mat = count_matrix(local[in_bg], vis[in_bg], col1 - col0, n_v)
                m = counts_mat.sum(axis=1)
                pairable = m >= 2
                alpha = alpha_from_counts(counts_mat, vals, level) if n_v else float("nan")
                pmask = eligible & rev_in_bg[bg][pa] & rev_in_bg[bg][pb]
                ok = pmask & (union > 0)
                cell = {
                    "domain": scope,
                    "dimension": dim,
                    "background": bg,
                    "fine": {
                        "alpha": _num(alpha),
                        "ci_low": None,
                        "ci_high": None,
                        "n_items": int(pairable.sum()),
                        "n_scores": int(m[pairable].sum()),
                    },
                    "coarse": {
                        "jaccard": _num(jac[ok].mean()) if ok.any() else None,
                        "n_pairs": int(ok.sum()),
                        "n_pairs_empty_union": int((pmask & (union == 0)).sum()),
                    },
                }
                cell["reading"] = reading(
                    cell["fine"]["alpha"],
                    cell["coarse"]["jaccard"],
                    cell["fine"]["n_items"],
                    cell["coarse"]["n_pairs"],
                    min_co_rated,
                )
                cells.append(cell)
                if n_boot > 0 and cell["fine"]["alpha"] is not None:
                    boot_jobs.append((cell, UnitContributions(counts_mat, vals, level), col0, col1))
                rel = _num(icc1_from_counts(counts_mat, vals)) if n_v else None
                entry = {
                    "single_reliability": rel,
                    "k_for_075": k_needed(rel, 0.75),
                    "k_for_090": k_needed(rel, 0.90),
                    "curve": reliability_curve(rel),
                    "n_items": int(pairable.sum()),
                }
                if bg == ALL:
                    panel_entry = {
                        "domain": scope,
                        "dimension": dim,
                        "background": ALL,
                        **entry,
                        "by_background": {},
                    }
                    panel.append(panel_entry)
                else:
                    # groups starts with ALL, which set panel_entry.
                    assert panel_entry is not None
                    panel_entry["by_background"][bg] = entry

    _bootstrap_cells(boot_jobs, n_idea, n_boot, seed)
    contested = contested_ideas(ideas, dims, ic, rc, dc, score, scored, n_rev, top_contested)
    category_section = category_report(
        given,
        ideas=ideas,
        dims=dims,
        ic=ic,
        dc=dc,
        idea_dom=idea_dom,
        domains=domains,
        categories=categories or {},
        top=top_contested,
    )

    return {
        "level": level,
        "categories_included": bool(include_categories),
        "backgrounds": groups[1:],
        "n_ratings": int(len(frame)),
        "n_scored": int(scored.sum()),
        "n_ideas": int(n_idea),
        "n_reviewers": int(n_rev),
        "cells": cells,
        "strictness": strictness,
        "strictness_spread": spread,
        "pairwise": pairwise,
        "contested": contested,
        "panel": panel,
        "categories": category_section,
    }


def _bootstrap_cells(jobs, n_idea: int, n_boot: int, seed: int) -> None:
    """Fill ci_low/ci_high of every job's cell from one shared set of idea resamples.

    Cells over the same ideas (same scope) are stacked into one matrix so each block of
    resample weights is read once per scope: one BLAS product instead of one per cell.
    """
    if not jobs or n_boot <= 0 or n_idea == 0:
        return
    rng = np.random.default_rng(seed)
    samples = [np.empty(n_boot) for _ in jobs]
    groups: dict[tuple[int, int], list[int]] = {}
    for j, (_, _, c0, c1) in enumerate(jobs):
        groups.setdefault((c0, c1), []).append(j)
    stacked = {}
    for span, members in groups.items():
        widths = [jobs[j][1].columns.shape[1] for j in members]
        edges = np.r_[0, np.cumsum(widths)]
        stacked[span] = (np.hstack([jobs[j][1].columns for j in members]), edges)
    for start in range(0, n_boot, _BLOCK):
        size = min(_BLOCK, n_boot - start)
        w = resample_weights(n_idea, size, rng)
        for (c0, c1), members in groups.items():
            matrix, edges = stacked[(c0, c1)]
            sums = np.ascontiguousarray(w[:, c0:c1]) @ matrix
            for pos, j in enumerate(members):
                part = sums[:, edges[pos] : edges[pos + 1]]
                samples[j][start : start + size] = jobs[j][1].alphas_from_sums(part)
    for arr, (cell, _, _, _) in zip(samples, jobs, strict=True):
        lo, hi = percentile_interval(arr)
        cell["fine"]["ci_low"], cell["fine"]["ci_high"] = _num(lo), _num(hi)
