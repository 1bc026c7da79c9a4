"""Krippendorff's alpha from the coincidence matrix, vectorised with numpy.

Everything starts from a unit-by-value count matrix ``counts`` (units x values): how many
coders gave value ``v`` to unit ``u``. Coder identity does not enter alpha, so one
``np.bincount`` builds that matrix and one matrix product turns it into the coincidence
matrix; there is no Python loop over units.

Alpha is undefined (returned as NaN) when fewer than two pairable values exist or when the
expected disagreement is zero (every pairable value is the same, so no disagreement was
possible). Callers turn NaN into ``None`` for JSON.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

LEVELS = ("nominal", "ordinal", "interval", "ratio")

# Above this many cells a dense units x values matrix gets wasteful; switch to sparse.
_DENSE_LIMIT = 20_000_000


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    return level


def value_domain(observed: np.ndarray, values: Sequence[float] | None = None) -> np.ndarray:
    """The ordered value domain: the given ``values`` (kept in the given order) or the
    sorted distinct observed values."""
    if values is None:
        return np.unique(observed)
    domain = np.asarray(values, dtype=float)
    if domain.ndim != 1 or len(np.unique(domain)) != len(domain):
        raise ValueError("values must be a flat sequence of distinct numbers")
    return domain


def value_index(x: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """Position of every value of ``x`` in ``domain``; raises naming the first unknown value."""
    if len(x) == 0:
        return np.zeros(0, dtype=np.int64)
    sorter = np.argsort(domain, kind="stable")
    pos = np.searchsorted(domain, x, sorter=sorter)
    pos = np.clip(pos, 0, len(domain) - 1)
    idx = sorter[pos]
    bad = domain[idx] != x
    if bad.any():
        raise ValueError(f"value {x[bad][0]!r} is not in the value domain {domain.tolist()}")
    return idx.astype(np.int64)


def count_matrix(unit_idx: np.ndarray, value_idx: np.ndarray, n_units: int, n_values: int):
    """Units x values count matrix (dense float64, or scipy CSR when it would be huge)."""
    if n_units * n_values <= _DENSE_LIMIT:
        flat = np.bincount(unit_idx * n_values + value_idx, minlength=n_units * n_values)
        return flat.reshape(n_units, n_values).astype(np.float64)
    from scipy import sparse

    data = np.ones(len(unit_idx), dtype=np.float64)
    return sparse.csr_matrix((data, (unit_idx, value_idx)), shape=(n_units, n_values))


def coincidence_matrix(counts) -> np.ndarray:
    """o_ck = sum_u (n_uc n_uk - [c=k] n_uc) / (m_u - 1) over units with m_u >= 2."""
    if hasattr(counts, "tocsr"):  # sparse
        from scipy import sparse

        m = np.asarray(counts.sum(axis=1)).ravel()
        w = np.where(m >= 2, 1.0 / np.maximum(m - 1, 1), 0.0)
        weighted = sparse.diags(w) @ counts
        o = np.asarray((counts.T @ weighted).todense())
        o[np.diag_indices_from(o)] -= np.asarray(weighted.sum(axis=0)).ravel()
        return o
    counts = np.asarray(counts, dtype=np.float64)
    m = counts.sum(axis=1)
    keep = m >= 2
    c = counts[keep]
    weighted = c / (m[keep] - 1)[:, None]
    o = c.T @ weighted
    o[np.diag_indices_from(o)] -= weighted.sum(axis=0)
    return o


def delta_squared(level: str, domain: np.ndarray, n_v: np.ndarray | None) -> np.ndarray:
    """Squared distances between domain values; ``n_v`` (V,) or batched (B, V) marginals
    (ordinal only; the other levels take None).

    Ordinal per Krippendorff (2011): for ranks c <= k,
    delta^2 = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2, so it depends on the marginals.
    """
    v = np.asarray(domain, dtype=np.float64)
    if level == "nominal":
        return 1.0 - np.eye(len(v))
    if level == "interval":
        return (v[:, None] - v[None, :]) ** 2
    if level == "ratio":
        total = v[:, None] + v[None, :]
        diff = v[:, None] - v[None, :]
        out = np.zeros_like(total)
        np.divide(diff, total, out=out, where=total != 0)
        return out**2
    # ordinal
    n_v = np.asarray(n_v, dtype=np.float64)
    idx = np.arange(n_v.shape[-1])
    lo = np.minimum(idx[:, None], idx[None, :])
    hi = np.maximum(idx[:, None], idx[None, :])
    cs = np.concatenate([np.zeros(n_v.shape[:-1] + (1,)), np.cumsum(n_v, axis=-1)], axis=-1)
    between = cs[..., hi + 1] - cs[..., lo]
    ends = (n_v[..., :, None] + n_v[..., None, :]) / 2.0
    return (between - ends) ** 2


def alpha_from_coincidence(o: np.ndarray, domain: np.ndarray, level: str) -> float:
    """Alpha from a (V, V) coincidence matrix."""
    n_v = o.sum(axis=1)
    n = n_v.sum()
    if n < 2:
        return float("nan")
    d2 = delta_squared(level, domain, n_v)
    expected = n_v @ d2 @ n_v
    if expected <= 0:
        return float("nan")
    return float(1.0 - (n - 1.0) * (o * d2).sum() / expected)


def alpha_batch(o: np.ndarray, domain: np.ndarray, level: str) -> np.ndarray:
    """Alphas for a stack of coincidence matrices (B, V, V); NaN where undefined."""
    n_v = o.sum(axis=2)
    n = n_v.sum(axis=1)
    if level == "ordinal":
        d2 = delta_squared(level, domain, n_v)  # (B, V, V)
        observed = (o * d2).sum(axis=(1, 2))
        expected = np.einsum("bi,bij,bj->b", n_v, d2, n_v)
    else:
        d2 = delta_squared(level, domain, n_v)
        observed = o.reshape(len(o), -1) @ d2.ravel()
        expected = np.einsum("bi,ij,bj->b", n_v, d2, n_v)
    out = np.full(len(o), np.nan)
    ok = (n >= 2) & (expected > 0)
    out[ok] = 1.0 - (n[ok] - 1.0) * observed[ok] / expected[ok]
    return out


def alpha_from_counts(counts, domain: np.ndarray, level: str = "ordinal") -> float:
    """Alpha from a units x values count matrix."""
    check_level(level)
    return alpha_from_coincidence(coincidence_matrix(counts), np.asarray(domain, float), level)


def krippendorff_alpha(
    reliability_data, level: str = "ordinal", values: Sequence[float] | None = None
) -> float:
    """Krippendorff's alpha of an observers x units matrix with NaN for missing values.

    ``values`` is the ordered value domain (default: the distinct observed values); it matters
    for ordinal data only through its order. Returns NaN when alpha is undefined (fewer than
    two pairable values, or no disagreement possible).
    """
    check_level(level)
    data = np.asarray(reliability_data, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError("reliability_data must be a 2-D array (observers x units)")
    mask = ~np.isnan(data)
    coder_idx, unit_idx = np.nonzero(mask)
    x = data[coder_idx, unit_idx]
    domain = value_domain(x, values)
    if len(domain) == 0:
        return float("nan")
    counts = count_matrix(unit_idx, value_index(x, domain), data.shape[1], len(domain))
    return alpha_from_counts(counts, domain, level)


def alpha_from_long(
    frame: pd.DataFrame,
    unit_col: str,
    coder_col: str,
    value_col: str,
    level: str = "ordinal",
    values: Sequence[float] | None = None,
) -> float:
    """Alpha from a long frame (one row per coder and unit); NaN values are missing.

    Raises ValueError if a coder has two values for the same unit.
    """
    check_level(level)
    for col in (unit_col, coder_col, value_col):
        if col not in frame.columns:
            raise ValueError(f"column {col!r} is missing from the frame")
    sub = frame.loc[frame[value_col].notna(), [unit_col, coder_col, value_col]]
    dup = sub.duplicated([unit_col, coder_col])
    if dup.any():
        row = sub[dup].iloc[0]
        raise ValueError(
            f"coder {row[coder_col]!r} has more than one value for unit {row[unit_col]!r}"
        )
    x = sub[value_col].to_numpy(dtype=np.float64)
    unit_idx, units = pd.factorize(sub[unit_col], sort=False)
    domain = value_domain(x, values)
    if len(domain) == 0:
        return float("nan")
    counts = count_matrix(
        unit_idx.astype(np.int64), value_index(x, domain), len(units), len(domain)
    )
    return alpha_from_counts(counts, domain, level)
