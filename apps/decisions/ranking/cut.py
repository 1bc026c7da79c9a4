"""The cut: a shortlist of exactly N ideas per domain, and each idea's P(top N).

The shortlist is the first N ideas of the ranking shown (its order: lower bound, estimate or
P(top N)); ``in_shortlist`` is true for exactly min(N, ideas) of them. P(top N) is the posterior
probability that the idea is among the N best of its domain on that ranking: the model's
``top_probability`` on the stored posterior summaries (estimate, and the sd read back from the
90 % interval), with k = N exactly. Computed when read, from the stored summaries: the draws
cover only the ideas that can reach the top N (the others are 0 without drawing), which takes
a few milliseconds per domain (docs/decide.md gives the figure), and any N a manager asks for
then has its probability at once, with no recompute to wait for. The same seed gives the same
numbers on the page, in the CSV, in a decision's figures and in the memo.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .model import Z90
from .top import top_probability


def top_n_probability(estimate: np.ndarray, sd: np.ndarray, n: int) -> np.ndarray:
    """P(among the n best) for each idea, from normal posteriors (mean, sd)."""
    total = len(estimate)
    if total == 0:
        return np.zeros(0)
    if n >= total:
        return np.ones(total)
    # top_probability takes a share and keeps ceil(share x total) ideas: (n - 0.5) / total
    # gives exactly n whatever the rounding of the division.
    return top_probability(estimate, np.maximum(sd, 0.0), share=(n - 0.5) / total)


def top_n_of(
    estimate: Sequence[float] | np.ndarray,
    low: Sequence[float] | np.ndarray,
    high: Sequence[float] | np.ndarray,
    *,
    n: int,
) -> np.ndarray:
    """P(among the n best), rounded as shown, of every idea of one domain's ranking (all of
    them: the probability is over the domain) from its stored figures; the posterior sd is the
    one the 90 % interval implies (estimate +/- Z90 sd)."""
    sd = (np.asarray(high, dtype=float) - np.asarray(low, dtype=float)) / (2 * Z90)
    p = top_n_probability(np.asarray(estimate, dtype=float), np.maximum(sd, 0.0), max(1, int(n)))
    return np.round(p, 3)


def with_top_n(rows: Sequence[dict[str, Any]], *, n: int) -> list[dict[str, Any]]:
    """Every row of one domain's ranking with ``p_top_n`` (``top_n_of``); the order of
    ``rows`` does not matter."""
    p = top_n_of(
        [float(r["estimate"]) for r in rows],
        [float(r["low"]) for r in rows],
        [float(r["high"]) for r in rows],
        n=n,
    )
    return [{**r, "p_top_n": float(p[i])} for i, r in enumerate(rows)]


def mark_cut(ordered: Sequence[dict[str, Any]], *, n: int) -> list[dict[str, Any]]:
    """The full ranking in the order shown, with ``cut_rank`` (its position) and
    ``in_shortlist``: true for exactly the first min(n, ideas)."""
    n = max(1, int(n))
    return [{**r, "cut_rank": i + 1, "in_shortlist": i < n} for i, r in enumerate(ordered)]


def just_below(rows: Sequence[dict[str, Any]], *, n: int, count: int = 5) -> list[dict[str, Any]]:
    """What would change the shortlist: the ``count`` ideas right below the cut."""
    return list(rows[n : n + count])
