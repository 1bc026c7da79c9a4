"""How many reviewers does an idea need? Single-rater reliability and Spearman-Brown.

Single-rater reliability is the one-way random-effects intraclass correlation ICC(1)
(Shrout & Fleiss 1979) estimated from unbalanced data: every idea is a group, each of its
scores a draw from a random reviewer. Which reviewers see an idea differs from idea to idea,
so reviewer strictness is part of the error, exactly as it is for a real panel drawn from the
pool; this is the absolute-agreement single-rater reliability that ICC(2,1) targets in a
crossed design, which our sparse assignment design does not have. The reliability of the mean
of k reviewers then follows from Spearman-Brown (this is ICC(1,k)).
"""

from __future__ import annotations

import math

import numpy as np


def spearman_brown(rel1: float, k: float) -> float:
    """Reliability of the mean of k raters whose single-rater reliability is rel1."""
    if k < 1:
        raise ValueError(f"k must be at least 1; got {k}")
    denom = 1.0 + (k - 1.0) * rel1
    if denom == 0:
        return float("nan")
    return k * rel1 / denom


def k_needed(rel1: float | None, target: float) -> int | None:
    """Smallest whole number of raters whose mean reaches ``target`` reliability.

    None when it can never be reached: rel1 missing or <= 0 (more raters do not help).
    """
    if not 0.0 < target < 1.0:
        raise ValueError(f"target must be between 0 and 1; got {target}")
    if rel1 is None or not math.isfinite(rel1) or rel1 <= 0:
        return None
    if rel1 >= target:
        return 1
    exact = target * (1.0 - rel1) / (rel1 * (1.0 - target))
    # The tolerance keeps float noise (e.g. 3.0000000000000004) from adding a rater.
    return max(1, math.ceil(exact - 1e-9))


def reliability_curve(rel1: float | None, k_max: int = 20) -> list[dict]:
    """[{"k", "reliability"}] for k = 1..k_max; empty when rel1 is missing or <= 0."""
    if rel1 is None or not math.isfinite(rel1) or rel1 <= 0:
        return []
    return [{"k": k, "reliability": float(spearman_brown(rel1, k))} for k in range(1, k_max + 1)]


def icc1_from_counts(counts: np.ndarray, domain: np.ndarray) -> float:
    """One-way random-effects ICC(1) from an items x values count matrix (unbalanced).

    Only items with at least two scores enter. NaN if fewer than two such items, no
    within-item degrees of freedom, or a zero denominator.
    """
    counts = np.asarray(counts, dtype=np.float64)
    v = np.asarray(domain, dtype=np.float64)
    m = counts.sum(axis=1)
    keep = m >= 2
    counts, m = counts[keep], m[keep]
    g = len(m)
    n = m.sum()
    if g < 2 or n - g < 1:
        return float("nan")
    s1 = counts @ v
    s2 = counts @ (v * v)
    between_part = (s1 * s1 / m).sum()
    ss_between = between_part - s1.sum() ** 2 / n
    ss_within = s2.sum() - between_part
    ms_between = ss_between / (g - 1)
    ms_within = max(ss_within, 0.0) / (n - g)
    n0 = (n - (m * m).sum() / n) / (g - 1)
    denom = ms_between + (n0 - 1.0) * ms_within
    if denom <= 0:
        return float("nan")
    return float((ms_between - ms_within) / denom)


def icc1(scores_by_item: list[list[float]]) -> float:
    """ICC(1) from a list of per-item score lists (convenience wrapper)."""
    flat = [x for item in scores_by_item for x in item]
    domain = np.unique(np.asarray(flat, dtype=np.float64)) if flat else np.zeros(0)
    counts = np.zeros((len(scores_by_item), len(domain)))
    for i, item in enumerate(scores_by_item):
        for x in item:
            counts[i, np.searchsorted(domain, x)] += 1
    return icc1_from_counts(counts, domain)
