"""Bootstrap confidence intervals for alpha without recomputing alpha from scratch.

Alpha is a function of two sums over units: the coincidence matrix (sum of per-unit
coincidence contributions) and, through it, the value marginals. A bootstrap resample of
units is therefore just a weight vector w (how many times each unit was drawn), and the
resampled sums are ``W @ per_unit_contributions`` for a whole block of resamples at once.
For nominal, interval and ratio data the distance matrix is fixed, so each unit reduces to
one scalar (its observed disagreement) plus its value counts; for ordinal data the distance
depends on the marginals, so the full per-unit coincidence contribution (V*V numbers) is kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .alpha import check_level, count_matrix, delta_squared, value_domain, value_index

_BLOCK = 250  # resamples per block: bounds memory at _BLOCK x n_units weights
# Up to this many draws, a block's counts in one bincount (faster for small blocks: a loop over
# 250 rows of 170 units cost more than counting them); above it, row by row (less memory).
_COUNT_AT_ONCE = 250_000
# Weights a block of bootstrap_samples holds at most (40 MB of floats), past _BLOCK x 20,000.
_WEIGHT_CELLS = _BLOCK * 20_000


class UnitContributions:
    """Per-unit pieces of alpha for one set of counts (units x values, dense).

    ``columns`` (units x k) holds what each unit adds to the sums alpha needs; a block of
    resamples is then ``weights @ columns`` and ``alphas_from_sums`` finishes the job.
    """

    def __init__(self, counts: np.ndarray, domain: np.ndarray, level: str):
        check_level(level)
        counts = np.asarray(counts, dtype=np.float64)
        m = counts.sum(axis=1)
        pairable = m >= 2
        c = np.where(pairable[:, None], counts, 0.0)
        inv = np.where(pairable, 1.0 / np.maximum(m - 1.0, 1.0), 0.0)
        self.level = level
        self.domain = np.asarray(domain, dtype=np.float64)
        v = self.n_values = counts.shape[1]
        if level == "ordinal":
            # The coincidence contribution is symmetric: keep its upper triangle only.
            self._iu = np.triu_indices(v)
            outer = c[:, self._iu[0]] * c[:, self._iu[1]]
            diag = self._iu[0] == self._iu[1]
            outer[:, diag] -= c
            self.columns = outer * inv[:, None]
        else:
            self._d2 = delta_squared(level, self.domain, None)
            # diag(d2) is zero, so the -diag(n_u) term of the coincidences drops out.
            observed = np.einsum("ui,ij,uj->u", c, self._d2, c) * inv
            # A unit's row sums of its coincidence contribution are its value counts.
            self.columns = np.hstack([c, observed[:, None]])

    def alphas_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """Alphas from ``weights @ self.columns`` (B x k)."""
        b = len(sums)
        if self.level == "ordinal":
            o = np.zeros((b, self.n_values, self.n_values))
            o[:, self._iu[0], self._iu[1]] = sums
            o[:, self._iu[1], self._iu[0]] = sums
            n_v = o.sum(axis=2)
            d2 = delta_squared("ordinal", self.domain, n_v)
            observed = (o * d2).sum(axis=(1, 2))
            expected = np.einsum("bi,bij,bj->b", n_v, d2, n_v)
        else:
            n_v = sums[:, : self.n_values]
            observed = sums[:, self.n_values]
            expected = np.einsum("bi,ij,bj->b", n_v, self._d2, n_v)
        n = n_v.sum(axis=1)
        out = np.full(b, np.nan)
        ok = (n >= 2) & (expected > 0)
        out[ok] = 1.0 - (n[ok] - 1.0) * observed[ok] / expected[ok]
        return out

    def alphas(self, weights: np.ndarray) -> np.ndarray:
        """Alpha for each row of ``weights`` (B x units, how often each unit was drawn)."""
        return self.alphas_from_sums(weights @ self.columns)


def resample_weights(n_units: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """B x n_units matrix of draw counts: each row is one bootstrap resample of the units."""
    if n_boot * n_units <= _COUNT_AT_ONCE:
        draws = rng.integers(0, n_units, size=(n_boot, n_units))
        draws += (np.arange(n_boot) * n_units)[:, None]
        return (
            np.bincount(draws.ravel(), minlength=n_boot * n_units)
            .reshape(n_boot, n_units)
            .astype(np.float64)
        )
    # Large: drawn and counted row by row into the result (a row's draws are the same numbers
    # as that row of one B x n_units draw). Drawn at once, the draws were one more matrix of
    # the result's size, as integers (270 MB more for 250 x 166,600 units).
    weights = np.empty((n_boot, n_units), dtype=np.float64)
    for row in range(n_boot):
        weights[row] = np.bincount(rng.integers(0, n_units, size=n_units), minlength=n_units)
    return weights


def percentile_interval(samples: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the finite bootstrap alphas; NaNs if fewer than half are finite."""
    finite = samples[np.isfinite(samples)]
    if len(finite) == 0 or len(finite) < 0.5 * len(samples):
        return float("nan"), float("nan")
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(finite, [tail, 100.0 - tail])
    return float(lo), float(hi)


def bootstrap_samples(
    contributions: Sequence[UnitContributions], n_units: int, n_boot: int, seed: int
) -> list[np.ndarray]:
    """Bootstrap alphas for several analyses that share the same units (same resamples).

    Units that a given analysis cannot pair simply contribute zero to it.
    """
    rng = np.random.default_rng(seed)
    out = [np.empty(n_boot) for _ in contributions]
    if n_units == 0:
        for arr in out:
            arr[:] = np.nan
        return out
    # Fewer resamples a block where units are many: the weights are block x units floats
    # (332 MB for 250 resamples of 166,600 units).
    # The same draws (resample_weights draws row by row); a smaller block's products differ
    # from a larger one's in the last bits only, and up to 20,000 units nothing changes.
    block = min(_BLOCK, max(1, _WEIGHT_CELLS // n_units))
    for start in range(0, n_boot, block):
        size = min(block, n_boot - start)
        w = resample_weights(n_units, size, rng)
        for arr, contrib in zip(out, contributions, strict=True):
            arr[start : start + size] = contrib.alphas(w)
    return out


def bootstrap_samples_of_kinds(
    contributions: Sequence[UnitContributions], n_of_kind: np.ndarray, n_boot: int, seed: int
) -> list[np.ndarray]:
    """``bootstrap_samples`` for units that repeat: each analysis's contributions hold one row
    per kind of unit (units that add the same to every analysis), and ``n_of_kind`` how many
    units are of each kind.

    A resample of the n units, drawn with replacement, holds each kind a multinomial number of
    times (n draws, chances ``n_of_kind / n``): the same distribution as ``bootstrap_samples``
    over the units one by one, but not the same numbers, in time that grows with the kinds, not
    the units. Two coders on a five-point scale make at most a few hundred kinds of unit;
    one cell of the overall alignment at a million ratings holds 166,600 units.
    """
    counts = np.asarray(n_of_kind, dtype=np.int64)
    n_units = int(counts.sum())
    if n_units == 0:
        return [np.full(n_boot, np.nan) for _ in contributions]
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n_units, counts / n_units, size=n_boot).astype(np.float64)
    return [contrib.alphas(draws) for contrib in contributions]


def bootstrap_alpha(
    reliability_data,
    level: str = "ordinal",
    values: Sequence[float] | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of alpha, resampling the pairable units with replacement.

    Reproducible: the same data and seed give the same interval.
    """
    check_level(level)
    data = np.asarray(reliability_data, dtype=np.float64)
    mask = ~np.isnan(data)
    coder_idx, unit_idx = np.nonzero(mask)
    x = data[coder_idx, unit_idx]
    domain = value_domain(x, values)
    if len(domain) == 0 or n_boot <= 0:
        return float("nan"), float("nan")
    counts = count_matrix(unit_idx, value_index(x, domain), data.shape[1], len(domain))
    counts = np.asarray(counts.todense() if hasattr(counts, "todense") else counts)
    counts = counts[counts.sum(axis=1) >= 2]
    contrib = UnitContributions(counts, domain, level)
    (samples,) = bootstrap_samples([contrib], len(counts), n_boot, seed)
    return percentile_interval(samples, confidence)
