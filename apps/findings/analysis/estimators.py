"""Incidence-based richness estimators: how many distinct findings a panel has not yet raised.

The data are incidence data in the ecologists' sense: T sampling units (reviewers), and for each
observed finding the number of units that raised it (its incidence Y_i, 1 <= Y_i <= T). From
these, with Q_k the number of findings raised by exactly k reviewers and U = sum(Y_i):

- Chao2 (Chao 1987; bias-corrected form of Chao 2005, as in iNEXT/EstimateS/SpadeR):
  S = S_obs + (T-1)/T * Q1^2 / (2 Q2), or (T-1)/T * Q1 (Q1-1) / 2 when Q2 = 0;
  its interval is Chao's log-normal one, which never goes below S_obs:
  [S_obs + f0/K, S_obs + f0*K], K = exp(z sqrt(ln(1 + var/f0^2))).
  When no unseen finding is implied (Q1 = 0, or Q1 = 1 without doubletons) the log-normal form
  has nothing to spread; the interval is then Chao's for that case (as in SpadeR): with
  P = sum_k Q_k e^-k / S_obs the estimated chance that a finding is missed,
  [max(S_obs, (S_obs - z sd)/(1-P)), (S_obs + z sd)/(1-P)], sd from the observed Q_k. A panel
  of three that all raised the same two points has not shown that a third does not exist.
  The total is a count, so the reported bounds are whole findings: the lower one rounded down,
  the upper one rounded up (a lower bound of 4.5 means "4 or 5 findings are still possible";
  dropping 4 would exclude a total the data do not rule out). `bounds` keeps the exact ones.
- Sample coverage (Chao & Jost 2012, incidence form): the share of the incidence mass belonging to
  findings already seen, C = 1 - Q1/U * (T-1) Q1 / ((T-1) Q1 + 2 Q2).
- Rarefaction and extrapolation (Chao et al. 2014, Ecol. Monographs 84:45-67): the expected
  number of distinct findings t reviewers raise, exactly interpolated for t <= T and extrapolated
  for t > T with the Chao2 estimate of the unseen; "expected new findings from k more reviewers"
  is S(T+k) - S_obs. Intervals come from the paper's bootstrap: a population is rebuilt from the
  estimated detection probabilities (seen and unseen findings), T reviewers are redrawn from it,
  and the spread of the redrawn curves gives a standard error (estimate +- 1.96 SE).

Pure: numpy only, no Django. Every function takes the incidence counts (one int per observed
finding) and the number of sampling units T.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Z95 = 1.959963984540054
# numpy sums fewer than this many numbers one after the other (its pairwise sum starts at 8).
SEQUENTIAL_BELOW = 8


@dataclass(frozen=True)
class Chao2:
    estimate: float
    low: float
    high: float
    observed: int
    q1: int
    q2: int
    units: int
    bounds: tuple[float, float]  # the exact interval before rounding to whole findings


Incidences = Sequence[int] | np.ndarray


def _counts(incidences: Incidences, units: int) -> np.ndarray:
    y = np.asarray(list(incidences), dtype=int)
    if units < 0:
        raise ValueError("the number of sampling units must be >= 0")
    if len(y) and (y.min() < 1 or y.max() > units):
        raise ValueError("every incidence must be between 1 and the number of sampling units")
    return y


def chao2(incidences: Incidences, units: int, *, z: float = Z95) -> Chao2:
    """Chao2 with its 95 % interval in whole findings (see the module docstring).

    With fewer than two sampling units nothing beyond S_obs can be estimated (undefined, NaN).
    """
    y = _counts(incidences, units)
    s_obs = len(y)
    q1, q2 = int((y == 1).sum()), int((y == 2).sum())
    if units < 2:
        nan = float("nan")
        return Chao2(nan if s_obs else 0.0, nan, nan, s_obs, q1, q2, units, (nan, nan))
    a = (units - 1) / units
    f0 = float(_unseen_of(q1, q2, units))
    s_hat = s_obs + f0
    if q1 > 0 and q2 > 0:
        r = q1 / q2
        var = q2 * (a / 2 * r**2 + a * a * r**3 + a * a / 4 * r**4)
    elif q1 > 1:
        var = a * q1 * (q1 - 1) / 2 + a * a * q1 * (2 * q1 - 1) ** 2 / 4 - a * a * q1**4 / 4 / s_hat
    else:
        var = 0.0
    if f0 > 0 and var > 0:
        k = math.exp(z * math.sqrt(math.log(1 + var / f0**2)))
        low, high = s_obs + f0 / k, s_obs + f0 * k
    elif s_obs:
        low, high = _interval_without_unseen(y, units, z)
    else:
        low = high = 0.0
    reported_low = float(math.floor(low + 1e-9))
    reported_high = float(math.ceil(high - 1e-9))
    return Chao2(s_hat, reported_low, reported_high, s_obs, q1, q2, units, (low, high))


def _interval_without_unseen(y: np.ndarray, units: int, z: float) -> tuple[float, float]:
    """Chao's interval when the data imply no unseen finding (Q1 <= 1 and f0 = 0).

    Each finding raised k times is taken as missed with chance e^-k (a Poisson approximation);
    P is the mean of those chances, and the observed count is scaled by 1/(1-P).
    """
    s_obs = len(y)
    ks, q = np.unique(y, return_counts=True)
    miss = np.exp(-ks.astype(float))
    var = float(np.sum(q * (miss - miss**2)) - np.sum(ks * miss * q) ** 2 / units)
    p = float(np.sum(q * miss) / s_obs)
    spread = z * math.sqrt(max(var, 0.0))
    return max(float(s_obs), (s_obs - spread) / (1 - p)), (s_obs + spread) / (1 - p)


def coverage(incidences: Incidences, units: int) -> float:
    """Estimated sample coverage C(T) (Chao & Jost 2012); NaN when nothing was observed."""
    y = _counts(incidences, units)
    u = float(y.sum())
    if u == 0 or units < 1:
        return float("nan")
    q1, q2 = int((y == 1).sum()), int((y == 2).sum())
    if units == 1:
        return 1 - q1 / u if q1 < u else 0.0
    t = units
    if q2 > 0:
        factor = (t - 1) * q1 / ((t - 1) * q1 + 2 * q2)
    else:
        factor = (t - 1) * (q1 - 1) / ((t - 1) * (q1 - 1) + 2) if q1 > 0 else 0.0
    return float(min(1.0, max(0.0, 1 - q1 / u * factor)))


def _unseen(y: np.ndarray, units: int) -> float:
    if units < 2:
        return 0.0
    return float(_unseen_of(int((y == 1).sum()), int((y == 2).sum()), units))


def _unseen_of(q1: Any, q2: Any, units: int) -> Any:
    """Chao2's unseen findings from the singletons q1 and doubletons q2 (numbers, or arrays of
    them: the bootstrap's redraws at once); units >= 2."""
    a = (units - 1) / units
    return np.where(q2 > 0, a * q1 * q1 / np.maximum(2 * q2, 1), a * q1 * (q1 - 1) / 2)


def expected_richness(incidences: Incidences, units: int, t: int) -> float:
    """Expected distinct findings raised by t reviewers (t >= 0), interpolated or extrapolated."""
    y = _counts(incidences, units)
    return float(_curve(y, units, np.array([t]))[0])


def _curve(y: np.ndarray, units: int, ts: np.ndarray) -> np.ndarray:
    """Expected distinct findings at each t of `ts`. Remembered per (incidences, T, ts): the
    bootstrap redraws the same incidences again and again for small panels, and every idea's
    section draws its own 100."""
    y = np.asarray(y)
    ts = np.asarray(ts)
    return _curve_remembered(
        y.dtype.str, y.tobytes(), int(units), ts.dtype.str, ts.tobytes()
    ).copy()


@functools.lru_cache(maxsize=8192)  # at most a few MB: a curve is one float per t
def _curve_remembered(
    y_dtype: str, y_bytes: bytes, units: int, ts_dtype: str, ts_bytes: bytes
) -> np.ndarray:
    return _curve_computed(
        np.frombuffer(y_bytes, dtype=y_dtype), units, np.frombuffer(ts_bytes, dtype=ts_dtype)
    )


def _curve_computed(y: np.ndarray, units: int, ts: np.ndarray) -> np.ndarray:
    out = np.zeros(len(ts), dtype=float)
    s_obs = len(y)
    if s_obs == 0 or units == 0:
        return out
    q1 = int((y == 1).sum())
    f0 = _unseen(y, units)
    ts = np.asarray(ts, dtype=int)
    inside = (ts > 0) & (ts <= units)
    if inside.any():
        # 1 - C(T-Y, t)/C(T, t): the chance that t of the T reviewers include one who raised it,
        # for every t at once: row t-1 of the running product is C(T-Y, t)/C(T, t).
        ratios = _ratio_binom_rows(units - y, units, int(ts[inside].max()))
        out[inside] = (1.0 - ratios).sum(axis=1)[ts[inside] - 1]
    for i, t in enumerate(ts):
        t = int(t)
        if t > units:
            if f0 > 0 and q1 > 0:
                step = 1.0 - q1 / (units * f0 + q1)
                out[i] = s_obs + f0 * (1.0 - step ** (t - units))
            else:
                out[i] = float(s_obs)
    return out


def _replicate_curves(counts: np.ndarray, units: int, ts: np.ndarray) -> np.ndarray:
    """``_curve`` of every bootstrap replicate (a row of ``counts``: how many reviewers raised
    each finding, 0 for none) at once, bit for bit the curves one replicate at a time gives,
    without a Python call per replicate (23,000 ideas x 100 replicates at a million ratings).

    A replicate's rarefied curve sums, over the findings it saw in their order, a term that
    depends on the finding's count alone (``found_by_count``). numpy sums fewer than
    SEQUENTIAL_BELOW terms one after the other, so the replicates that saw that few are padded
    with findings nobody raised (a term of exactly 0) and summed together; the others are
    summed in groups of the same number of findings, as they were."""
    curves = np.zeros((len(counts), len(ts)), dtype=float)
    seen = counts > 0
    n_seen = seen.sum(axis=1)
    rare = np.flatnonzero((ts > 0) & (ts <= units))
    beyond = np.flatnonzero(ts > units)
    if len(rare):
        t_max = int(ts[rare].max())
        found_by_count = 1.0 - _ratio_binom_rows(units - np.arange(units + 1), units, t_max)
        few = (n_seen > 0) & (n_seen < SEQUENTIAL_BELOW)
        groups = [np.flatnonzero(few)] + [
            np.flatnonzero(n_seen == size)
            for size in np.unique(n_seen[n_seen >= SEQUENTIAL_BELOW]).tolist()
        ]
        for rows in groups:
            if not len(rows):
                continue
            # Each replicate's counts of the findings it saw, in their order, then zeros.
            order = np.argsort(~seen[rows], axis=1, kind="stable")
            y = np.take_along_axis(counts[rows], order, axis=1)[:, : int(n_seen[rows].max())]
            terms = np.ascontiguousarray(found_by_count[:, y].transpose(1, 0, 2))
            curves[np.ix_(rows, rare)] = terms.sum(axis=2)[:, ts[rare] - 1]
    if len(beyond):
        q1 = (counts == 1).sum(axis=1)
        q2 = (counts == 2).sum(axis=1)
        f0 = _unseen_of(q1, q2, units) if units >= 2 else np.zeros(len(counts))
        grows = (f0 > 0) & (q1 > 0)
        step = 1.0 - q1 / np.where(grows, units * f0 + q1, 1.0)
        # Python's power (C's pow) on the few distinct steps: numpy's own may round the last
        # bit differently (SIMD).
        distinct, which = np.unique(step, return_inverse=True)
        powers = np.array(
            [[x ** int(k) for k in ts[beyond] - units] for x in distinct.tolist()]
        ).reshape(len(distinct), len(beyond))
        extra = f0[:, None] * (1.0 - powers[which.ravel()])
        curves[:, beyond] = np.where(
            grows[:, None], n_seen[:, None] + extra, n_seen[:, None].astype(float)
        )
    return curves


def _ratio_binom_rows(n_minus: np.ndarray, n: int, t_max: int) -> np.ndarray:
    """Row t-1: C(n - y, t) / C(n, t) for each entry n - y, t = 1..t_max, as running products
    (no overflow; the same products, in the same order, as multiplying one factor at a time)."""
    j = np.arange(t_max)
    factors = np.maximum(np.asarray(n_minus)[None, :] - j[:, None], 0) / (n - j)[:, None]
    return np.cumprod(factors, axis=0)


def expected_new(incidences: Incidences, units: int, more: int) -> float:
    """Expected findings not yet raised that `more` additional reviewers would raise."""
    y = _counts(incidences, units)
    if units < 2:
        return float("nan")
    return float(_curve(y, units, np.array([units + more]))[0] - len(y))


@dataclass(frozen=True)
class CurvePoint:
    reviewers: int
    findings: float
    low: float
    high: float
    extrapolated: bool


def discovery_curve(
    incidences: Incidences,
    units: int,
    *,
    until: int | None = None,
    bootstrap: int = 100,
    seed: int = 0,
) -> list[CurvePoint]:
    """Rarefaction (t <= T) and extrapolation (T < t <= until, default 2T) with 95 % intervals.

    The interval is the bootstrap of Chao et al. 2014: detection probabilities for seen findings
    are Y_i/T shrunk by the estimated coverage; the estimated unseen findings share the missing
    mass. T reviewers are redrawn as independent Bernoulli columns, and each redraw's curve is
    computed the same way. Deterministic for a given seed.
    """
    y = _counts(incidences, units)
    until = max(units, until if until is not None else 2 * units)
    ts = np.arange(1, until + 1)
    estimate = _curve(y, units, ts)
    if units < 2 or len(y) == 0:
        return [
            CurvePoint(int(t), float(e), float(e), float(e), bool(t > units))
            for t, e in zip(ts, estimate, strict=True)
        ]
    rng = np.random.default_rng(seed)
    u = float(y.sum())
    c_hat = coverage(y, units)
    f0 = math.ceil(_unseen(y, units))
    # Seen findings keep their observed rate, scaled so that seen + unseen mass = U/T.
    p_seen = np.clip(y / units * (c_hat if not math.isnan(c_hat) else 1.0), 0, 1)
    p_unseen = (u / units) * (1 - c_hat) / f0 if f0 > 0 and not math.isnan(c_hat) else 0.0
    p = np.concatenate([p_seen, np.full(f0, min(1.0, p_unseen))])
    draws = rng.random((bootstrap, units, len(p))) < p  # reviewers x findings, per replicate
    curves = _replicate_curves(draws.sum(axis=1), units, ts)
    se = curves.std(axis=0, ddof=1)
    points = []
    for i, t in enumerate(ts):
        low = max(0.0, float(estimate[i] - Z95 * se[i]))
        if t >= units:
            low = max(low, float(len(y)))  # at and beyond T, at least what was seen
        points.append(
            CurvePoint(
                int(t), float(estimate[i]), low, float(estimate[i] + Z95 * se[i]), bool(t > units)
            )
        )
    return points


def reviewers_for_share(
    incidences: Incidences, units: int, *, share: float = 0.8, limit: int = 200
) -> int | None:
    """The smallest number of reviewers expected to raise `share` of the Chao2 total.

    None when undefined (fewer than two reviewers or no finding) or beyond `limit`.
    """
    y = _counts(incidences, units)
    if units < 2 or len(y) == 0:
        return None
    total = chao2(y, units).estimate
    ts = np.arange(1, limit + 1)
    curve = _curve(y, units, ts)
    hit = np.nonzero(curve >= share * total - 1e-9)[0]
    return int(ts[hit[0]]) if len(hit) else None
