"""The value of one more read at the shortlist's cut (apps.decisions.ranking.routing's module
docstring has the rule): how much one read is expected to reduce the probability that the idea
sits on the wrong side of the cut. Pure numbers, no board or idea types."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri

__all__ = ["cut_value"]

# Gauss-Hermite nodes and weights for E[f(Z)], Z standard normal (cut_value's expectation).
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(32)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def cut_value(p: float, sd: float, read_var: float) -> float:
    """The expected reduction of the probability that the idea is on the wrong side of the cut,
    min(P, 1 - P), from one more read (module docstring). ``p``: its P(top N) now; ``sd``: its
    posterior sd; ``read_var``: the variance one read's information corresponds to."""
    p = min(max(float(p), 1e-9), 1 - 1e-9)
    sd = max(float(sd), 1e-9)
    now = min(p, 1.0 - p)
    if now <= 1e-6:
        return 0.0
    after_sd = math.sqrt(1.0 / (1.0 / sd**2 + 1.0 / max(read_var, 1e-9)))
    move = math.sqrt(max(sd**2 - after_sd**2, 0.0))
    # In units of the cut: u = (m - c) / sd now; after the read u' = (m' - c) / sd'.
    u = float(ndtri(p))
    u_after = (u * sd + move * _NODES) / after_sd
    after = float(np.sum(_WEIGHTS * ndtr(-np.abs(u_after))))
    return max(0.0, now - after)
