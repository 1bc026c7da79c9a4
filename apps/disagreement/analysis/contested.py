"""Contested ideas: where reviewers' scores for one idea spread the most.

The raw spread (max - min of raw scores) mixes real disagreement with differences in scale
use; the z spread (max - min of within-reviewer standardised scores) removes each reviewer's
strictness and scale first, so it ranks the ideas reviewers really see differently.

Ranking (ORDER): calibrated spread descending, then raw spread descending, then idea id and
dimension. A cell whose reviewers all gave the same score (raw spread 0) is never listed, even
when their z-scores differ: reviewers who wrote the same number do not disagree about the idea,
however differently they use the scale elsewhere.
"""

from __future__ import annotations

import math

import numpy as np

ORDER = ("z_spread", "raw_spread")


def _num(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def contested_ideas(ideas, dims, ic, rc, dc, score, scored, n_rev, top) -> list[dict]:
    """Idea x dimension cells with >= 2 different scores, most disputed (by z spread) first.

    Works on compute_metrics' integer codes: ``ideas`` is its idea table (idea_id, idea,
    domain) indexed by idea code; ic/rc/dc are the row codes of idea, reviewer, dimension.
    """
    n_dim = max(len(dims), 1)
    rows = np.flatnonzero(scored)
    if len(rows) == 0 or top <= 0:
        return []
    x = score[rows]
    # z within reviewer and dimension (sample std; std 0 or undefined -> z = 0).
    g = rc[rows].astype(np.int64) * n_dim + dc[rows]
    n_g = n_rev * n_dim
    cnt = np.bincount(g, minlength=n_g)
    mean = np.bincount(g, weights=x, minlength=n_g) / np.maximum(cnt, 1)
    var = np.bincount(g, weights=(x - mean[g]) ** 2, minlength=n_g) / np.maximum(cnt - 1, 1)
    sd = np.sqrt(var)
    z = np.where((cnt[g] > 1) & (sd[g] > 0), (x - mean[g]) / np.where(sd[g] > 0, sd[g], 1), 0.0)

    key = ic[rows].astype(np.int64) * n_dim + dc[rows]
    order = np.argsort(key, kind="stable")
    ks, xs, zs = key[order], x[order], z[order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    n = np.diff(np.r_[starts, len(ks)])
    raw_spread = np.maximum.reduceat(xs, starts) - np.minimum.reduceat(xs, starts)
    z_spread = np.maximum.reduceat(zs, starts) - np.minimum.reduceat(zs, starts)
    grp = np.repeat(np.arange(len(starts)), n)
    gmean = np.bincount(grp, weights=xs) / n
    gdev = np.bincount(grp, weights=(xs - gmean[grp]) ** 2)
    raw_sd = np.sqrt(gdev / np.maximum(n - 1, 1))
    keep = np.flatnonzero((n >= 2) & (raw_spread > 0))
    gkey = ks[starts[keep]]
    idea_idx, dim_idx = gkey // n_dim, gkey % n_dim
    idea_ids = ideas["idea_id"].to_numpy()
    rank = np.lexsort((dim_idx, idea_ids[idea_idx], -raw_spread[keep], -z_spread[keep]))[:top]
    ext = ideas["idea"].astype(str).to_numpy()
    titles = ideas["title"].astype(str).to_numpy() if "title" in ideas.columns else ext
    dom = ideas["domain"].to_numpy()
    out = []
    for j in rank.tolist():
        ii, dd = int(idea_idx[j]), int(dim_idx[j])
        out.append(
            {
                "idea_id": int(idea_ids[ii]),
                "idea": str(ext[ii]),
                "title": str(titles[ii]),
                "domain": str(dom[ii]),
                "dimension": dims[dd],
                "n_scores": int(n[keep][j]),
                "raw_spread": float(raw_spread[keep][j]),
                "raw_sd": _num(raw_sd[keep][j]),
                "z_spread": _num(z_spread[keep][j]),
            }
        )
    return out
