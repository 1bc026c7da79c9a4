"""Coarse alignment at the largest k: top-half membership defined under ties, Jaccard and
top-half overlap per reviewer, undefined (with the reason) for near-constant series."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from apps.disagreement.analysis.coarse import jaccard as _jaccard
from apps.judges.engine.alignment.figures import _clean, _kind_pos


def jaccard(a: set, b: set) -> float | None:
    if _jaccard is not None:
        return _clean(_jaccard(a, b))
    union = a | b
    return None if not union else len(a & b) / len(union)


# A score series is "nearly constant" when one value covers at least this share of its items:
# its above-median set is then empty or a handful of items, and set overlaps measure nothing.
NEAR_CONSTANT_SHARE = 0.9


def constant_reason(values: pd.Series | np.ndarray, *, who: str) -> str | None:
    """Why a score series cannot carry a median split, or None when it can.

    `who` names the series in the sentence ("the judge's predictions", "the reviewer's scores").
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) < 2:
        return f"{who} cover fewer than 2 items"
    levels, counts = np.unique(v, return_counts=True)
    top = float(levels[counts.argmax()])
    if len(levels) == 1:
        return f"{who} are {top:g} for every item ({len(v)}), so no item is above the median"
    share = float(counts.max()) / len(v)
    if share >= NEAR_CONSTANT_SHARE:
        return (
            f"{who} are {top:g} for {share:.0%} of the items, so the above-median set is "
            "empty or trivial"
        )
    return None


def coarse_pair(
    truth: pd.Series | np.ndarray, pred: pd.Series | np.ndarray, items: pd.Series | np.ndarray
) -> tuple[float | None, float | None, str | None]:
    """(Jaccard, top-50 % overlap, reason) for one reviewer: both None with the reason when either
    series is (nearly) constant, because then the sets say nothing that alpha does not."""
    t, p, ids = (np.asarray(x) for x in (truth, pred, items))
    t, p = t.astype(float), p.astype(float)
    reason = constant_reason(p, who="the judge's predictions") or constant_reason(
        t, who="the reviewer's scores"
    )
    if reason:
        return None, None, reason
    del ids  # memberships are aligned by position
    mt, mp = top_half_membership(t), top_half_membership(p)
    both = np.minimum(mt, mp).sum()
    either = np.maximum(mt, mp).sum()
    j = float(both / either) if either > 0 else None
    overlap = float(both / mt.sum()) if mt.sum() > 0 else None
    return j, overlap, None


def top_half_membership(values: np.ndarray) -> np.ndarray:
    """Each item's share of membership in the top half, defined under ties: items above the
    median 1, below 0, and the items tied at the median share what is left of n / 2 equally.
    So every series has exactly n / 2 of membership, a constant series gives 0.5 to every
    item, and overlaps of two series are at chance (0.5) when they are unrelated; the old
    cut (at or above the median) put a whole tie block in the top half and gave 100 %."""
    v = np.asarray(values, dtype=float)
    n = len(v)
    median = float(np.median(v))
    above = v > median
    at = v == median
    out = above.astype(float)
    if at.any():
        out[at] = min(1.0, max(0.0, (n / 2 - above.sum()) / at.sum()))
    return out


def _undefined_note(reasons: list[str], n_total: int) -> str | None:
    if not reasons:
        return None
    if len(reasons) == n_total:
        scope = f"every reviewer ({n_total})" if n_total > 1 else "the reviewer"
        return f"Undefined for {scope}: {reasons[0]}."
    return f"Undefined for {len(reasons)} of {n_total} reviewers (for example, {reasons[0]})."


def coarse_alignment(
    finals: pd.DataFrame, *, k: int | None = None, by_reviewer: bool = False
) -> list[dict[str, Any]]:
    """Above-median Jaccard and top-50 % overlap per (kind, dimension) at k (default: largest k).

    A reviewer whose judge predictions (or own scores) are constant or nearly so contributes no
    number but a reason; a row whose reviewers are all such says "undefined" with the reason
    instead of a figure that would contradict alpha.
    """
    if finals.empty:
        return []
    rows = []
    keys = ["dimension", "kind"] + (["reviewer_id"] if by_reviewer else [])
    # As arrays: a frame's filter, dropna and groupby per cell were most of a report's time
    # (each reviewer's section at 100x the demo). The cells are groupby's, in its order, and
    # each reviewer's rows keep the frame's order, so every figure is the same.
    kk = finals["k"].to_numpy()
    truth, pred = finals["truth"].to_numpy(float), finals["pred"].to_numpy(float)
    reviewer, idea = finals["reviewer_id"].to_numpy(), finals["idea_id"].to_numpy()
    scored = ~(np.isnan(truth) | np.isnan(pred))
    cells = finals.groupby(keys, sort=True).indices
    for key in sorted(cells):
        at = cells[key]
        values = dict(zip(keys, key, strict=True))
        use_k = int(kk[at].max()) if k is None else k
        at = at[(kk[at] == use_k) & scored[at]]
        at = at[np.argsort(reviewer[at], kind="stable")]  # by reviewer, in the frame's order
        starts = np.flatnonzero(np.r_[True, reviewer[at][1:] != reviewer[at][:-1]])
        jaccards, overlaps, reasons = [], [], []
        for own in np.split(at, starts[1:]) if len(at) else []:
            j, overlap, reason = coarse_pair(truth[own], pred[own], idea[own])
            if reason:
                reasons.append(reason)
                continue
            if j is not None:
                jaccards.append(j)
            if overlap is not None:
                overlaps.append(overlap)
        n_reviewers = len(starts) if len(at) else 0
        note = _undefined_note(reasons, n_reviewers)
        if n_reviewers == 0:
            note = "Undefined: the judge kept no prediction at this k."
        row = {
            **values,
            "k": use_k,
            "jaccard": _clean(np.mean(jaccards)) if jaccards else None,
            "top50_overlap": _clean(np.mean(overlaps)) if overlaps else None,
            "n_reviewers": len(overlaps),
            "n_undefined": len(reasons),
            "undefined_reason": note,
        }
        if by_reviewer:
            row["reviewer_id"] = int(values["reviewer_id"])
        rows.append(row)
    rows.sort(key=lambda r: (r["dimension"], _kind_pos(r["kind"])))
    return rows
