"""The figures of one dimension in one scope (a domain, or every domain), the steps of
compute_metrics after the frame is coded (coding.py): the reviewers' strictness, the pairs'
agreement, and the cells and panel reliability per background.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .alpha import alpha_batch, alpha_from_counts, count_matrix
from .bootstrap import UnitContributions
from .coding import ALL, Codes, DimensionRows
from .panel import icc1_from_counts, k_needed, reliability_curve
from .readings import reading


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


@dataclass
class Sections:
    """The result's row lists, filled scope by scope, and the cells awaiting their bootstrap."""

    cells: list[dict[str, Any]] = field(default_factory=list)
    strictness: list[dict[str, Any]] = field(default_factory=list)
    spread: list[dict[str, Any]] = field(default_factory=list)
    pairwise: list[dict[str, Any]] = field(default_factory=list)
    panel: list[dict[str, Any]] = field(default_factory=list)
    # (cell, its UnitContributions, first idea column, end column)
    boot_jobs: list[tuple[dict[str, Any], UnitContributions, int, int]] = field(
        default_factory=list
    )


@dataclass(frozen=True)
class _Pairs:
    """The reviewer pairs of one scope: co-rated ideas, Jaccard of their picks."""

    eligible: np.ndarray  # per distinct pair: at least min_co_rated shared ideas
    union: np.ndarray
    jaccard: np.ndarray


def scope_figures(
    c: Codes,
    rows: DimensionRows,
    scope: str,
    k: int | None,
    out: Sections,
    scales: Mapping[str, tuple[int, int]],
    level: str,
    min_co_rated: int,
    n_boot: int,
) -> None:
    """Every figure of one dimension in one scope (a domain, or every domain when k is None)."""
    in_scope = (
        slice(0, len(rows.x))
        if k is None
        else slice(*np.searchsorted(rows.dom, [k, k + 1]).tolist())
    )
    col0, col1 = (0, c.n_idea) if k is None else (int(c.dom_start[k]), int(c.dom_end[k]))
    _scope_strictness(c, rows, scope, in_scope, out, scales)
    pairs = _scope_pairwise(c, rows, scope, k, out, level, min_co_rated)
    _scope_cells(c, rows, scope, in_scope, col0, col1, pairs, out, level, min_co_rated, n_boot)


def _scope_strictness(
    c: Codes,
    rows: DimensionRows,
    scope: str,
    in_scope: slice,
    out: Sections,
    scales: Mapping[str, tuple[int, int]],
) -> None:
    """Each reviewer's mean, spread and score counts in the scope, the spread of their means,
    and which of their scores lie above their own median (the picks the Jaccard compares)."""
    n_rev, n_v, vals, dim = c.n_rev, rows.n_v, rows.vals, rows.dim
    rs, xs, vis = rows.r[in_scope], rows.x[in_scope], rows.vi[in_scope]
    cnt = np.bincount(rs, minlength=n_rev)
    tot = np.bincount(rs, weights=xs, minlength=n_rev)
    mean = np.divide(tot, cnt, out=np.full(n_rev, np.nan), where=cnt > 0)
    dev = np.bincount(rs, weights=(xs - mean[rs]) ** 2, minlength=n_rev)
    std = np.sqrt(np.divide(dev, cnt - 1, out=np.full(n_rev, np.nan), where=cnt > 1))
    vcounts = np.bincount(rs * n_v + vis, minlength=n_rev * n_v).reshape(n_rev, n_v)
    med = _medians_from_counts(vcounts, cnt, vals)
    rows.above[in_scope] = xs > med[rs]
    lo, hi = scales.get(dim, (None, None))
    base_keys = (
        [str(s) for s in range(int(lo), int(hi) + 1)] if lo is not None and hi is not None else []
    )
    val_keys = [_score_key(v) for v in vals]
    for rv in np.flatnonzero(cnt > 0).tolist():
        counts = dict.fromkeys(base_keys, 0)
        for key, n in zip(val_keys, vcounts[rv].tolist(), strict=True):
            if n or key not in counts:
                counts[key] = counts.get(key, 0) + int(n)
        out.strictness.append(
            {
                "domain": scope,
                "dimension": dim,
                "reviewer": c.rev_name[rv],
                "reviewer_id": c.rev_id[rv],
                "background": str(c.rev_bg[rv]),
                "mean": float(mean[rv]),
                "std": _num(std[rv]),
                "n": int(cnt[rv]),
                "counts": counts,
            }
        )
    means = mean[cnt > 0]
    out.spread.append(
        {
            "domain": scope,
            "dimension": dim,
            "sd_of_means": _num(means.std(ddof=1)) if len(means) >= 2 else None,
            "min_mean": _num(means.min()) if len(means) else None,
            "max_mean": _num(means.max()) if len(means) else None,
            "n_reviewers": int(len(means)),
        }
    )


def _scope_pairwise(
    c: Codes,
    rows: DimensionRows,
    scope: str,
    k: int | None,
    out: Sections,
    level: str,
    min_co_rated: int,
) -> _Pairs:
    """Pairwise alpha and Jaccard over the ideas each reviewer pair co-rated in the scope."""
    n_p, n_v = rows.n_p, rows.n_v
    psel = (
        slice(0, len(rows.inv))
        if k is None
        else slice(*np.searchsorted(rows.pair_dom, [k, k + 1]).tolist())
    )
    pinv = rows.inv[psel]
    n_items = np.bincount(pinv, minlength=n_p)
    al, ar = rows.above[rows.left[psel]], rows.above[rows.right[psel]]
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
            sub[keep] * n_v * n_v + rows.val_pair[psel][keep], minlength=len(listed) * n_v * n_v
        )
        cont = cont.reshape(len(listed), n_v, n_v).astype(np.float64)
        pair_alpha = alpha_batch(cont + cont.transpose(0, 2, 1), rows.vals, level)
        for a_, b_, a_alpha, n_it, j in zip(
            rows.pa[listed].tolist(),
            rows.pb[listed].tolist(),
            _nums(pair_alpha),
            n_items[listed].tolist(),
            _nums(jac[listed]),
            strict=True,
        ):
            out.pairwise.append(
                {
                    "domain": scope,
                    "dimension": rows.dim,
                    "reviewer_a": c.rev_name[a_],
                    "reviewer_b": c.rev_name[b_],
                    "alpha": a_alpha,
                    "n_items": int(n_it),
                    "jaccard": j,
                }
            )
    return _Pairs(eligible=eligible, union=union, jaccard=jac)


def _scope_cells(
    c: Codes,
    rows: DimensionRows,
    scope: str,
    in_scope: slice,
    col0: int,
    col1: int,
    pairs: _Pairs,
    out: Sections,
    level: str,
    min_co_rated: int,
    n_boot: int,
) -> None:
    """Per background (everyone first): the cell (alpha, Jaccard, the reading) and the panel
    reliability, with every background's reliability under everyone's panel entry."""
    n_v, vals, dim = rows.n_v, rows.vals, rows.dim
    rs, vis = rows.r[in_scope], rows.vi[in_scope]
    local = rows.i[in_scope] - col0
    panel_entry: dict[str, Any] | None = None
    for bg in c.groups:
        in_bg = c.rev_in_bg[bg][rs]
        counts_mat = count_matrix(local[in_bg], vis[in_bg], col1 - col0, n_v)
        m = counts_mat.sum(axis=1)
        pairable = m >= 2
        alpha = alpha_from_counts(counts_mat, vals, level) if n_v else float("nan")
        pmask = pairs.eligible & c.rev_in_bg[bg][rows.pa] & c.rev_in_bg[bg][rows.pb]
        ok = pmask & (pairs.union > 0)
        cell: dict[str, Any] = {
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
                "jaccard": _num(pairs.jaccard[ok].mean()) if ok.any() else None,
                "n_pairs": int(ok.sum()),
                "n_pairs_empty_union": int((pmask & (pairs.union == 0)).sum()),
            },
        }
        cell["reading"] = reading(
            cell["fine"]["alpha"],
            cell["coarse"]["jaccard"],
            cell["fine"]["n_items"],
            cell["coarse"]["n_pairs"],
            min_co_rated,
        )
        out.cells.append(cell)
        if n_boot > 0 and cell["fine"]["alpha"] is not None:
            out.boot_jobs.append((cell, UnitContributions(counts_mat, vals, level), col0, col1))
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
            out.panel.append(panel_entry)
        else:
            # groups starts with ALL, which set panel_entry.
            assert panel_entry is not None
            panel_entry["by_background"][bg] = entry
