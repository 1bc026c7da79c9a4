"""The value of one more read at the shortlist's cut (apps.decisions.ranking.routing's module
docstring has the rule): how much one read is expected to reduce the probability that the idea
sits on the wrong side of the cut. Pure numbers, no board or idea types."""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr, ndtri

__all__ = ["cut_value", "cut_values"]

# Gauss-Hermite nodes and weights for E[f(Z)], Z standard normal (cut_value's expectation).
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(32)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def cut_values(p: np.ndarray, sd: np.ndarray, read_var: np.ndarray) -> np.ndarray:
    """The expected reduction of the probability that each idea is on the wrong side of the
    cut, min(P, 1 - P), from one more read (module docstring), for arrays of ideas (routing
    values every idea of a domain at once). ``p``: P(top N) now; ``sd``: the posterior sd;
    ``read_var``: the variance one read's information corresponds to."""
    p = np.clip(np.asarray(p, dtype=float), 1e-9, 1 - 1e-9)
    sd = np.maximum(np.asarray(sd, dtype=float), 1e-9)
    now = np.minimum(p, 1.0 - p)
    after_sd = np.sqrt(1.0 / (1.0 / sd**2 + 1.0 / np.maximum(read_var, 1e-9)))
    move = np.sqrt(np.maximum(sd**2 - after_sd**2, 0.0))
    # In units of the cut: u = (m - c) / sd now; after the read u' = (m' - c) / sd'.
    u = ndtri(p)
    u_after = (u[:, None] * sd[:, None] + move[:, None] * _NODES[None, :]) / after_sd[:, None]
    # Summed per row as the scalar rule sums one idea (a matrix product's order of summation
    # can differ from row to row, and ideas of equal state must keep equal values).
    after = (_WEIGHTS * ndtr(-np.abs(u_after))).sum(axis=1)
    return np.where(now <= 1e-6, 0.0, np.maximum(0.0, now - after))


def cut_value(p: float, sd: float, read_var: float) -> float:
    """``cut_values`` of one idea."""
    return float(cut_values(np.array([p]), np.array([sd]), np.array([read_var]))[0])
