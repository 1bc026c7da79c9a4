"""What an idea's interval must also hold: the uncertainty of the reviewers' severities and of
the scale's origin, which the alternating fit takes as known.

``fit_dimension`` estimates the ideas' qualities a, the reviewers' severities b and the origin
mu by alternating updates; the variance it reports for a[i] is the one with b and mu held at
their estimates: 1 / (sum of s^2 w / sigma^2 + 1 / tau^2). Where the readers of an idea are
seen mostly together (a panel that reads a block of ideas no one else reads), the data cannot
tell a block of good ideas from a lenient panel: what separates them is only the severities'
prior, and the estimate of the panel's severity carries that uncertainty into every idea of
the block, the same error for all of them, which no number of the panel's reads averages
away. On the demo (reviewers read in panels of 3-4) that made the read ideas' 90 % intervals
too narrow (docs/decide.md).

Here the variance is the marginal of the joint Gaussian posterior of (a, b, mu) given the
spreads s (the linear model x = mu + b[r] + s[r] a[i] + noise, priors a ~ N(0, tau^2),
b ~ N(0, sigma^2 / k_b), mu flat). With the ideas' block A (diagonal), the reviewers' and
origin's block B and the coupling C, the ideas' marginal covariance is

    (A - C B^-1 C')^-1 = A^-1 + A^-1 C S^-1 C' A^-1,   S = B - C' A^-1 C

(the Woodbury identity: S is reviewers + 1 square, small), and only its diagonal is needed:
diag(G S^-1 G') with G = A^-1 C sparse (an idea couples only with its readers). Cost: the
reads times the reviewers, per dimension. Pure numpy and scipy.sparse, no Django.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

# The origin's prior precision (a flat prior, kept invertible).
FLAT = 1e-9


def _joint(
    i_ix: np.ndarray,
    r_ix: np.ndarray,
    weight: np.ndarray,
    spread: np.ndarray,
    idea_precision: np.ndarray,
    n_reviewers: int,
    sigma2: float,
    severity_prior_reads: float,
) -> tuple[sparse.csr_matrix, np.ndarray]:
    """G = A^-1 C and S^-1, the joint posterior covariance of (severities, mu) once the
    ideas' qualities are integrated out (module docstring)."""
    n_i = len(idea_precision)
    m = n_reviewers + 1  # the reviewers, then mu
    # C: d^2 (-log posterior) / da[i] db[r] = w s[r] / sigma^2; with mu the same summed.
    # Built as CSR directly: each idea's row holds its reads by reviewer, then mu's entry.
    order = np.argsort(i_ix * m + r_ix, kind="stable")
    ii, rr = i_ix[order], r_ix[order]
    c = weight[order] * spread[rr] / sigma2
    per_idea = np.bincount(ii, minlength=n_i)
    indptr = np.zeros(n_i + 1, dtype=np.int64)
    np.cumsum(per_idea + (per_idea > 0), out=indptr[1:])
    # Each read moves down by the number of read ideas before its own (their mu entries).
    at = np.arange(len(ii)) + np.cumsum(per_idea > 0)[ii] - 1
    mu_at = indptr[1:][per_idea > 0] - 1
    data = np.empty(indptr[-1])
    indices = np.empty(indptr[-1], dtype=np.int64)
    data[at], indices[at] = c, rr
    data[mu_at], indices[mu_at] = np.bincount(ii, weights=c, minlength=n_i)[per_idea > 0], m - 1
    coupling = sparse.csr_matrix((data, indices, indptr), shape=(n_i, m))
    # B: the reviewers' and the origin's own precision (their reads, the severity prior).
    reads = np.bincount(r_ix, weights=weight, minlength=n_reviewers) / sigma2
    b = np.zeros((m, m))
    b[np.arange(n_reviewers), np.arange(n_reviewers)] = reads + severity_prior_reads / sigma2
    b[n_reviewers, :n_reviewers] = b[:n_reviewers, n_reviewers] = reads
    b[n_reviewers, n_reviewers] = reads.sum() + FLAT
    # A^-1 C: each idea's row over its precision, on C's own structure.
    row_precision = np.repeat(idea_precision, np.diff(indptr))
    g = sparse.csr_matrix((data / row_precision, indices, indptr), shape=(n_i, m))
    schur = b - (coupling.T @ g).toarray()
    # A tiny ridge keeps S invertible where a reviewer's severity and mu are not separated.
    schur[np.diag_indices_from(schur)] += 1e-12 * max(1.0, float(np.abs(schur).max()))
    return g, np.linalg.inv(schur)


def _through_reviewers(g: sparse.csr_matrix, s_inv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(G S^-1, the diagonal of G S^-1 G'): the ideas' covariance with the reviewers' effects
    and mu, and the variance each idea gains from them."""
    g_s = np.asarray(g @ s_inv)
    # The diagonal term by term over G's stored entries (G is as sparse as the reads).
    rows = np.repeat(np.arange(g.shape[0]), np.diff(g.indptr))
    diag = np.bincount(rows, weights=g.data * g_s[rows, g.indices], minlength=g.shape[0])
    return g_s, diag


def severity_and_read_variance(
    *,
    i_ix: np.ndarray,
    r_ix: np.ndarray,
    weight: np.ndarray,
    spread: np.ndarray,
    idea_precision: np.ndarray,
    n_reviewers: int,
    sigma2: float,
    severity_prior_reads: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(each reviewer's severity's posterior variance, each read's variance from the
    reviewers' effects), the ideas' uncertainty integrated out.

    The first is what the severities' variance component (their prior's variance, estimated
    as the mean of b^2 + this) must count. With the ideas taken as known it is sigma^2 / (reads
    + k_b), far too small where a panel reads only its own block: the severities' spread is
    then underestimated, and with it the uncertainty every idea carries.

    The second is, per read of idea i by reviewer r, Var(mu + b[r] + s[r] a[i]) less the
    s[r]^2 var(a[i] | b, mu) the fit counts already: what the EM's expected squared residual
    (sigma^2's update) must add for the severities and the origin being estimates, with their
    covariance with the idea's quality (negative: a lenient reader and a good idea explain the
    same high grade):

        Var(mu + b[r]) + s[r]^2 (G S^-1 G')_ii - 2 s[r] ((G S^-1)_ir + (G S^-1)_i,mu)

    By the law of total variance it is never negative."""
    if not len(i_ix) or n_reviewers == 0:
        return np.zeros(n_reviewers), np.zeros(len(i_ix))
    g, s_inv = _joint(
        i_ix, r_ix, weight, spread, idea_precision, n_reviewers, sigma2, severity_prior_reads
    )
    origin = n_reviewers
    g_s, idea_extra = _through_reviewers(g, s_inv)
    shift = np.diag(s_inv)[:n_reviewers] + s_inv[origin, origin] + 2 * s_inv[:n_reviewers, origin]
    s_obs = spread[r_ix]
    read = (
        shift[r_ix]
        + s_obs**2 * idea_extra[i_ix]
        - 2 * s_obs * (g_s[i_ix, r_ix] + g_s[i_ix, origin])
    )
    return np.maximum(np.diag(s_inv)[:n_reviewers], 0.0), np.maximum(read, 0.0)


def reviewer_effect_variance(
    *,
    i_ix: np.ndarray,
    r_ix: np.ndarray,
    weight: np.ndarray,
    spread: np.ndarray,
    idea_precision: np.ndarray,
    n_reviewers: int,
    sigma2: float,
    severity_prior_reads: float,
) -> np.ndarray:
    """Per idea, the variance its quality gains from the uncertainty of its readers'
    severities and of the origin mu (the diagonal of A^-1 C S^-1 C' A^-1, module docstring).

    ``i_ix``, ``r_ix``, ``weight``: the people's reads (idea index, reviewer index, weight);
    ``spread``: s per reviewer; ``idea_precision``: A's diagonal (the fit's 1 / var(a), the
    prior included); ``severity_prior_reads``: k_b, the severities' prior in reads.
    """
    n_i = len(idea_precision)
    if not len(i_ix) or n_i == 0:
        return np.zeros(n_i)
    g, s_inv = _joint(
        i_ix, r_ix, weight, spread, idea_precision, n_reviewers, sigma2, severity_prior_reads
    )
    _, extra = _through_reviewers(g, s_inv)
    return np.maximum(extra, 0.0)


# Pseudo-reads pulling a reviewer's grade shares towards the dimension's pooled shares.
GRADE_SHARE_PRIOR_READS = 5.0


def grade_resolution(
    reviewer: np.ndarray, idea: np.ndarray, grade: np.ndarray, grades: np.ndarray, n_ideas: int
) -> np.ndarray:
    """Per idea (indices 0..n_ideas-1), the variance of its standing (standard units) that its
    readers' grades leave however many they are: what coarse grades cannot resolve.

    A reviewer who gives grade g places the idea, among the ideas they grade, between the
    shares of ideas they grade below g and at most g (their own curve: a percentile band; the
    shares shrunk towards the dimension's pooled ones by GRADE_SHARE_PRIOR_READS). Readers
    whose bands coincide (several reviewers with the same curve, e.g. "3 of 4" for most ideas)
    repeat one another's rounding; the linear model takes their reads as independent and
    narrows the interval with each. The band every reader agrees on is the intersection of
    theirs; the idea's standing is a standard normal restricted to it, whose variance is the
    floor returned (0 where the bands do not intersect: the readers' own noise then resolves
    more than the bands, and the model's variance stands).
    """
    from scipy.special import ndtri

    out = np.zeros(n_ideas)
    if not len(idea):
        return out
    g_ix = np.searchsorted(grades, grade)
    k = len(grades)
    reviewers, r_ix = np.unique(reviewer, return_inverse=True)
    pooled = np.bincount(g_ix, minlength=k) / len(g_ix)
    counts = np.zeros((len(reviewers), k))
    np.add.at(counts, (r_ix, g_ix), 1.0)
    shares = (counts + GRADE_SHARE_PRIOR_READS * pooled) / (
        counts.sum(axis=1, keepdims=True) + GRADE_SHARE_PRIOR_READS
    )
    cum = np.c_[np.zeros(len(reviewers)), np.cumsum(shares, axis=1)]
    low = cum[r_ix, g_ix]
    high = cum[r_ix, g_ix + 1]
    lo_i = np.full(n_ideas, -np.inf)
    hi_i = np.full(n_ideas, np.inf)
    np.maximum.at(lo_i, idea, low)
    np.minimum.at(hi_i, idea, high)
    read = np.isfinite(lo_i)
    ok = read & (hi_i > lo_i + 1e-9)
    a = ndtri(np.clip(lo_i[ok], 1e-12, 1 - 1e-12))
    b = ndtri(np.clip(hi_i[ok], 1e-12, 1 - 1e-12))
    out[ok] = _truncated_normal_variance(a, b)
    return out


def _truncated_normal_variance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Var of a standard normal restricted to [a, b]."""
    from scipy.special import ndtr

    pa, pb = np.exp(-(a**2) / 2), np.exp(-(b**2) / 2)
    pa = np.where(np.isfinite(a), pa, 0.0) / np.sqrt(2 * np.pi)
    pb = np.where(np.isfinite(b), pb, 0.0) / np.sqrt(2 * np.pi)
    z = np.maximum(ndtr(b) - ndtr(a), 1e-300)
    at = np.where(np.isfinite(a), a * pa, 0.0)
    bt = np.where(np.isfinite(b), b * pb, 0.0)
    mean = (pa - pb) / z
    return np.maximum(1.0 + (at - bt) / z - mean**2, 0.0)


def resolution_floors(obs, fits, ideas: np.ndarray) -> np.ndarray:
    """``grade_resolution`` per dimension of ``fits`` (n ideas x dimensions, standard units)
    from the people's scored reads in ``obs`` (category answers and gates left out, as in the
    fit)."""
    n = len(ideas)
    out = np.zeros((n, len(fits)))
    dims = obs["dimension"].astype(str).to_numpy(dtype=object)
    score = obs["score"].to_numpy(dtype=float)
    scored = (obs["status"].astype(str).to_numpy(dtype=object) == "scored") & np.isfinite(score)
    idea_ids = obs["idea_id"].to_numpy(np.int64)
    reviewer_ids = obs["reviewer_id"].to_numpy(np.int64)
    for j, f in enumerate(fits):
        sc = f.scale
        grades = np.array([g for g in range(sc.low, sc.high + 1) if g not in sc.categories])
        m = (dims == f.dimension) & scored
        m &= np.isin(score, grades)
        ix = np.searchsorted(ideas, idea_ids[m])
        inside = ix < n
        out[:, j] = grade_resolution(
            reviewer_ids[m][inside],
            ix[inside],
            score[m][inside].astype(np.int64),
            grades,
            n,
        )
    return out


def spread_effect_variance(
    *,
    i_ix: np.ndarray,
    r_ix: np.ndarray,
    weight: np.ndarray,
    quality: np.ndarray,
    quality_var: np.ndarray,
    spread: np.ndarray,
    sigma2: float,
    tau2: float,
    spread_prior: float,
) -> np.ndarray:
    """Per idea, the variance its quality gains from the uncertainty of its readers' spreads.

    The fit's a[i] = sum w s[r] (x - mu - b[r]) / D, D = sum w s[r]^2 + sigma^2 / tau^2, so an
    error e[r] in a reader's spread moves it by about -w s[r] a[i] e[r] / D: the further an
    idea stands from the average, the more its place depends on how its readers use the scale.
    Each spread is a ridge regression's slope, its variance sigma^2 / (sum over the reviewer's
    reads of w (a^2 + var a) + ``spread_prior``) (the prior's pseudo-reads, as in the fit).
    """
    n_i = len(quality)
    n_r = len(spread)
    if not len(i_ix) or n_i == 0:
        return np.zeros(n_i)
    s_obs = spread[r_ix]
    info = np.bincount(
        r_ix, weights=weight * (quality[i_ix] ** 2 + quality_var[i_ix]), minlength=n_r
    )
    spread_var = sigma2 / (info + spread_prior)
    d = np.bincount(i_ix, weights=weight * s_obs**2, minlength=n_i) + sigma2 / tau2
    moved = np.bincount(i_ix, weights=(weight * s_obs) ** 2 * spread_var[r_ix], minlength=n_i)
    return quality**2 * moved / d**2


def standardising_variance(precision: np.ndarray) -> np.ndarray:
    """Per dimension, the relative variance of the estimated sd of the domain's ideas (tau),
    the unit in which the overall ranking states a standing.

    ``precision``: the people's precision of each idea (n ideas x dimensions, standard units;
    0 for an unread idea). tau^2 is estimated from the read ideas' data means, each of
    variance tau^2 (1 + 1 / p): its Fisher information is sum (p / (1 + p))^2 / (2 tau^4), so
    Var(tau^2) / tau^4 = 2 / sum (p / (1 + p))^2, and a quarter of that for tau. The standing
    is relative to the board's own ideas, not to a population they are drawn from, so the part
    of it that sampling the ideas accounts for (2 / N with N ideas, all known exactly) is taken
    out: with every idea read without noise the unit is known and the variance is 0.

    A standing z = a / tau then carries z^2 times this (``fit_domain``): the further an idea
    stands from the average, the more its place depends on the unit.
    """
    n = precision.shape[0]
    if n == 0:
        return np.zeros(precision.shape[1])
    q = precision / (1.0 + precision)
    info = (q**2).sum(axis=0)
    rel = np.divide(1.0, 2.0 * info, out=np.zeros_like(info), where=info > 0) - 1.0 / (2 * n)
    return np.maximum(rel, 0.0)
