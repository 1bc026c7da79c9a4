"""The decision model: each idea's standing with each reviewer's severity and spread taken out.

An empirical-Bayes additive (many-facet) model, fitted per dimension, then combined across the
dimensions (``fit_domain``). Why not statsmodels: its mixed models (MixedLM) fit crossed random
effects only through variance components, slowly, with no reviewer-specific scale (spread)
term; the model below is short numpy, and every quantity on the Decide page can be traced to a
formula here (docs/decide.md).

Per dimension, with a score rescaled to x = (score - floor) / (top - floor) in [0, 1]:

    x[r, i] = mu + b[r] + s[r] * a[i] + noise,   noise ~ N(0, sigma^2 / w)

- ``a[i]`` is the idea's quality, with prior N(0, tau^2) (estimated from the data: empirical
  Bayes). ``b[r]`` is the reviewer's severity (negative: strict), ``s[r]`` their spread (scale
  use: below 1 compresses to the middle). Both are shrunk towards 0 and 1, so a reviewer with
  little history is taken at face value rather than over-corrected: severity by
  sigma^2 / var(b) pseudo-reads (at most SEVERITY_PRIOR_READS), spread by SPREAD_PRIOR_READS.
- ``w`` is 1 for a human read. ``fit_dimension`` still accepts predictions as weighted reads
  (PREDICTION_WEIGHT x confidence), but the board no longer passes any: ``fit_domain`` adds the
  judges that read an idea as one calibrated measurement per idea, and gives predictions built
  from the idea's own reads no weight (``independent_predictions``).
- A gate that closed a stage (status "gated") leaves the later dimensions missing: the gate was
  decided by the reviewer's own earlier scores, which are in the fit, and ``fit_domain``
  carries them to the later dimensions through the correlation of the dimensions.
- Category levels (PBIG's "not a B2B product", 0 on need validity and market size) are not
  grades: they are left out of the fit and counted beside it (``n_category``).
- Declined and unanswered ratings are missing: they say nothing about the idea.

``fit_domain`` combines the dimensions: each gives every idea a data mean and precision in
standard units of ideas; the idea's qualities share a multivariate normal prior with the
dimensions' correlation (and, where the domain text model's check passes, its estimate as the
prior mean, ranking/text.py); the posterior's marginals are the dimensions' rankings, its mean
over the dimensions the overall one (an idea nobody read has the spread of the mean of
correlated qualities).

Intervals are central 90 % posterior intervals; their variance also holds the uncertainty of the
reviewers' severities and spreads and of mu, and stops at what the readers' shared coarse grades
resolve (ranking/uncertainty.py, docs/decide.md). P(top X %) is the posterior probability that
the idea is among the ceil(X % of n) best of its domain on that ranking (``top_probability``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .uncertainty import (
    resolution_floors,
    reviewer_effect_variance,
    severity_variance,
    spread_effect_variance,
)

ALL = "__all__"
# z of a central 90 % normal interval.
Z90 = 1.6448536269514722
# A prediction at 100 % confidence counts as this many human reads.
PREDICTION_WEIGHT = 0.5
# Pseudo-reads pulling each reviewer's severity towards 0 (at most) and spread towards 1.
SEVERITY_PRIOR_READS = 3.0
SPREAD_PRIOR_READS = 5.0
# A reviewer's spread stays within these bounds (a reviewer who gives one grade everywhere
# would otherwise have spread 0 and make every idea they read look infinitely precise).
SPREAD_BOUNDS = (0.25, 3.0)
ITERATIONS = 30
# Intervals hold the uncertainty of the reviewers' severities and of mu (ranking/uncertainty.py);
# False: they are taken as known, as before (kept for bench/bench_decision.py's comparison).
REVIEWER_UNCERTAINTY = True
# The severities' joint posterior variance (an (R + 1)^2 inverse) is recomputed every this
# many iterations of the fit, not every one: it moves slowly, and it is the fit's dearest step.
SEVERITY_VARIANCE_EVERY = 10
# An idea's precision per dimension stops at what its readers' grades can resolve
# (ranking/uncertainty.py: grade_resolution); False: as before.
GRADE_RESOLUTION = True
# Ratings statuses.
SCORED, GATED = "scored", "gated"

# The observation frame: one row per human rating (any status) or prediction.
OBSERVATION_COLUMNS = ["reviewer_id", "idea_id", "dimension", "score", "status"]
PREDICTION_COLUMNS = ["reviewer_id", "idea_id", "dimension", "score", "confidence"]


@dataclass(frozen=True)
class Scale:
    """A dimension's grades: ``floor`` is the lowest grade that is not a category level."""

    low: int
    high: int
    categories: tuple[int, ...] = ()

    @property
    def floor(self) -> int:
        grades = [g for g in range(self.low, self.high + 1) if g not in self.categories]
        return grades[0] if grades else self.low

    @property
    def width(self) -> float:
        return float(max(self.high - self.floor, 1))


@dataclass
class DimensionFit:
    """The fitted model of one dimension (arrays aligned with ``ideas`` / ``reviewers``)."""

    dimension: str
    ideas: np.ndarray
    quality: np.ndarray  # a[i], posterior mean (scale units / width)
    variance: np.ndarray  # posterior variance of a[i]
    human_precision: np.ndarray  # sum of s^2 w / sigma^2 over human reads
    judge_precision: np.ndarray  # the same over predictions
    reviewers: np.ndarray
    severity: np.ndarray
    spread: np.ndarray
    mu: float
    sigma2: float
    tau2: float
    scale: Scale
    # The people's precision the interval may claim: human_precision less what the
    # uncertainty of the severities, spreads and mu takes (ranking/uncertainty.py).
    interval_precision: np.ndarray | None = None

    def score_scale(self, a: np.ndarray) -> np.ndarray:
        """A quality as the score a typical reviewer (no severity, unit spread) would give."""
        return self.scale.floor + (self.mu + a) * self.scale.width


def _index(values: np.ndarray, universe: np.ndarray) -> np.ndarray:
    return np.searchsorted(universe, values)


def fit_dimension(
    obs: pd.DataFrame,
    *,
    dimension: str,
    scale: Scale,
    ideas: np.ndarray,
    predictions: pd.DataFrame | None = None,
) -> DimensionFit:
    """Fit one dimension.

    ``obs`` has OBSERVATION_COLUMNS (this dimension's rows); ``ideas`` are every idea to estimate
    (sorted unique ids, including unread ones); ``predictions`` has PREDICTION_COLUMNS for pairs
    nobody of those reviewers has read (the caller drops read pairs).
    """
    ideas = np.asarray(ideas, dtype=np.int64)
    status = obs["status"].astype(str).to_numpy()
    score = obs["score"].to_numpy(dtype=float)
    cats = np.isin(score, list(scale.categories)) if scale.categories else np.zeros(len(obs), bool)
    # A gated dimension is missing here: the gate was decided by the reviewer's own earlier
    # scores, which are in the fit, and fit_domain carries them to this dimension through
    # the correlation of the dimensions (module docstring).
    usable = (status == SCORED) & np.isfinite(score) & ~cats
    h = obs[usable]
    hx = (score[usable] - scale.floor) / scale.width
    hw = np.ones(len(h))
    if predictions is not None and len(predictions):
        p = predictions[np.isfinite(predictions["score"].to_numpy(dtype=float))]
        ps = p["score"].to_numpy(dtype=float)
        keep = ~np.isin(ps, list(scale.categories)) if scale.categories else np.ones(len(p), bool)
        p, ps = p[keep], ps[keep]
        conf = pd.to_numeric(p["confidence"], errors="coerce").fillna(50).to_numpy(dtype=float)
        px = (ps - scale.floor) / scale.width
        pw = PREDICTION_WEIGHT * np.clip(conf, 0, 100) / 100.0
        pr, pi = p["reviewer_id"].to_numpy(np.int64), p["idea_id"].to_numpy(np.int64)
    else:
        px = pw = np.zeros(0)
        pr = pi = np.zeros(0, dtype=np.int64)
    hr, hi = h["reviewer_id"].to_numpy(np.int64), h["idea_id"].to_numpy(np.int64)
    reviewers = np.unique(np.r_[hr, pr])
    ideas_all = np.unique(np.r_[ideas, hi, pi])
    n_i, n_r = len(ideas_all), len(reviewers)
    # Observations: humans first, then predictions.
    r_ix = _index(np.r_[hr, pr], reviewers)
    i_ix = _index(np.r_[hi, pi], ideas_all)
    x = np.r_[hx, px]
    w = np.r_[hw, pw]
    human = np.r_[np.ones(len(hx), bool), np.zeros(len(px), bool)]

    mu = float(np.average(hx)) if len(hx) else 0.5
    a = np.zeros(n_i)
    b = np.zeros(n_r)
    s = np.ones(n_r)
    sigma2 = float(np.var(hx)) if len(hx) > 1 else 0.05
    sigma2 = max(sigma2, 1e-3)
    tau2 = sigma2
    var_a = np.full(n_i, tau2)
    hw_r = human.astype(float)
    tau_b2 = sigma2
    post_b: np.ndarray = np.zeros(n_r)
    for it in range(ITERATIONS if len(x) else 0):
        # Ideas given the reviewers: a precision-weighted mean, shrunk to the prior.
        sr = s[r_ix]
        prec = np.bincount(i_ix, weights=w * sr**2, minlength=n_i) / sigma2
        num = np.bincount(i_ix, weights=w * sr * (x - mu - b[r_ix]), minlength=n_i) / sigma2
        var_a = 1.0 / (prec + 1.0 / tau2)
        a = num * var_a
        # Reviewers given the ideas (people only): severity, then spread, each with a prior.
        ai = a[i_ix]
        res = (x - mu - s[r_ix] * ai) * hw_r
        n_h = np.bincount(r_ix, weights=hw_r, minlength=n_r)
        # Empirical Bayes: the pseudo-reads are sigma^2 / (the severities' variance), so
        # severities that clearly differ are barely shrunk; SEVERITY_PRIOR_READS is the most.
        k_b = min(SEVERITY_PRIOR_READS, sigma2 / max(tau_b2, 1e-6))
        b = np.bincount(r_ix, weights=res, minlength=n_r) / (n_h + k_b)
        # The severities' variance component (EM): each one's posterior variance with the
        # ideas' uncertainty integrated out (ranking/uncertainty.py), not sigma^2 / reads.
        # (It changes slowly: recomputed every SEVERITY_VARIANCE_EVERY iterations.)
        if not (REVIEWER_UNCERTAINTY and human.any()):
            post_b = sigma2 / (n_h + k_b)
        elif it % SEVERITY_VARIANCE_EVERY == 0:
            post_b = severity_variance(
                i_ix=i_ix[human],
                r_ix=r_ix[human],
                weight=w[human],
                spread=s,
                idea_precision=1.0 / var_a,
                n_reviewers=n_r,
                sigma2=sigma2,
                severity_prior_reads=k_b,
            )
        tau_b2 = float(np.mean(b**2 + post_b)) if n_r else 1.0
        # Spread: a ridge regression of (x - mu - b) on a, centred on 1.
        y = (x - mu - b[r_ix]) * hw_r
        ai2 = (ai**2 + var_a[i_ix]) * hw_r
        k = SPREAD_PRIOR_READS * tau2
        s = (np.bincount(r_ix, weights=y * ai, minlength=n_r) + k) / (
            np.bincount(r_ix, weights=ai2, minlength=n_r) + k
        )
        s = np.clip(s, *SPREAD_BOUNDS)
        # Global terms from people only.
        fitted = mu + b[r_ix] + s[r_ix] * a[i_ix]
        if human.any():
            resid = (x - fitted)[human]
            mu = float(mu + resid.mean())
            # Expected squared residual includes the uncertainty of a (EM).
            e2 = resid**2 + (s[r_ix] ** 2 * var_a[i_ix])[human]
            sigma2 = max(float(e2.mean()), 1e-3)
        read = np.bincount(i_ix[human], minlength=n_i) > 0
        if read.any():
            tau2 = max(float(np.mean(a[read] ** 2 + var_a[read])), 1e-3)
    sr = s[r_ix]
    hp = np.bincount(i_ix[human], weights=(w * sr**2)[human], minlength=n_i) / sigma2
    jp = np.bincount(i_ix[~human], weights=(w * sr**2)[~human], minlength=n_i) / sigma2
    var_a = 1.0 / (hp + jp + 1.0 / tau2)
    if REVIEWER_UNCERTAINTY and human.any():
        # The severities and mu are estimates too: their uncertainty widens every idea their
        # reviewers read (ranking/uncertainty.py). The people's precision becomes the one
        # that variance implies, so fit_domain carries it on.
        var_a = (
            var_a
            + reviewer_effect_variance(
                i_ix=i_ix[human],
                r_ix=r_ix[human],
                weight=w[human],
                spread=s,
                idea_precision=1.0 / var_a,
                n_reviewers=n_r,
                sigma2=sigma2,
                severity_prior_reads=min(SEVERITY_PRIOR_READS, sigma2 / max(tau_b2, 1e-6)),
            )
            + spread_effect_variance(
                i_ix=i_ix[human],
                r_ix=r_ix[human],
                weight=w[human],
                quality=a,
                quality_var=var_a,
                spread=s,
                sigma2=sigma2,
                tau2=tau2,
                spread_prior=SPREAD_PRIOR_READS * tau2,
            )
        )
        interval_hp = np.maximum(1.0 / var_a - jp - 1.0 / tau2, 0.0)
    else:
        interval_hp = hp
    keep_ix = _index(ideas, ideas_all)
    return DimensionFit(
        dimension=dimension,
        ideas=ideas,
        quality=a[keep_ix],
        variance=var_a[keep_ix],
        human_precision=hp[keep_ix],
        judge_precision=jp[keep_ix],
        reviewers=reviewers,
        severity=b,
        spread=s,
        mu=mu,
        sigma2=sigma2,
        tau2=tau2,
        scale=scale,
        interval_precision=interval_hp[keep_ix],
    )


@dataclass
class Ranking:
    """One ranking (a dimension, or ALL) over a set of ideas: estimate, sd and people's share."""

    dimension: str
    ideas: np.ndarray
    estimate: np.ndarray
    sd: np.ndarray
    judge_share: np.ndarray  # share of the data's precision that comes from predictions

    @property
    def low(self) -> np.ndarray:
        return self.estimate - Z90 * self.sd

    @property
    def high(self) -> np.ndarray:
        return self.estimate + Z90 * self.sd


def rankings(fits: Sequence[DimensionFit]) -> dict[str, Ranking]:
    """Per-dimension rankings on the score scale, and the overall one in standard units."""
    out: dict[str, Ranking] = {}
    if not fits:
        return out
    ideas = fits[0].ideas
    std_est, std_var, hp, jp = [], [], np.zeros(len(ideas)), np.zeros(len(ideas))
    for f in fits:
        total = f.human_precision + f.judge_precision
        share = np.divide(f.judge_precision, total, out=np.zeros(len(ideas)), where=total > 0)
        out[f.dimension] = Ranking(
            dimension=f.dimension,
            ideas=ideas,
            estimate=f.score_scale(f.quality),
            sd=np.sqrt(f.variance) * f.scale.width,
            judge_share=share,
        )
        tau = math.sqrt(f.tau2)
        std_est.append(f.quality / tau)
        std_var.append(f.variance / f.tau2)
        # On the common footing each dimension's precision is scaled by its tau^2.
        hp += f.human_precision * f.tau2
        jp += f.judge_precision * f.tau2
    d = len(fits)
    total = hp + jp
    out[ALL] = Ranking(
        dimension=ALL,
        ideas=ideas,
        estimate=np.mean(std_est, axis=0),
        sd=np.sqrt(np.sum(std_var, axis=0)) / d,
        judge_share=np.divide(jp, total, out=np.zeros(len(ideas)), where=total > 0),
    )
    return out


# Above this many candidate ideas, P(top) is computed in closed form instead of by draws.
MONTE_CARLO_MAX = 1000


def top_probability(
    estimate: np.ndarray, sd: np.ndarray, *, share: float, draws: int = 2000, seed: int = 0
) -> np.ndarray:
    """P(an idea is among the ceil(share * n) best), from the normal posteriors.

    Up to MONTE_CARLO_MAX candidate ideas: draws (ideas tied on a draw are ordered by index;
    ties have probability zero with continuous draws). Beyond, the cut is treated as fixed
    (many ideas make it nearly so): c solves sum_i Phi((m_i - c) / sd_i) = k, and
    P(top)_i = Phi((m_i - c) / sd_i), which sums to k like the draws do.
    """
    n_all = len(estimate)
    if n_all == 0:
        return np.zeros(0)
    k = max(1, math.ceil(share * n_all))
    out = np.zeros(n_all)
    # Only ideas that can reach the top are drawn: T is the k-th largest of the ideas'
    # pessimistic values (4 sd below), so at least k ideas lie above T on every draw but
    # a vanishing share; an idea whose optimistic value (4 sd above) is below T never enters.
    if n_all > k:
        floor = np.partition(estimate - 4 * sd, n_all - k)[n_all - k]
        keep = np.flatnonzero(estimate + 4 * sd >= floor)
    else:
        keep = np.arange(n_all)
    estimate, sd = estimate[keep], sd[keep]
    n = len(keep)
    if n <= k:
        out[keep] = 1.0
        return out
    if n > MONTE_CARLO_MAX:
        out[keep] = _top_closed_form(estimate, np.maximum(sd, 1e-9), k)
        return out
    draws = max(200, min(draws, 20_000_000 // n))
    rng = np.random.default_rng(seed)
    hits = np.zeros(n)
    chunk = max(1, min(draws, 2_000_000 // n))
    done = 0
    while done < draws:
        m = min(chunk, draws - done)
        sample = estimate[None, :] + sd[None, :] * rng.standard_normal((m, n))
        # The k-th largest of each draw: an idea is in the top if it is at least that.
        cut = np.partition(sample, n - k, axis=1)[:, n - k]
        hits += (sample >= cut[:, None]).sum(axis=0)
        done += m
    out[keep] = hits / draws
    return out


def _top_closed_form(estimate: np.ndarray, sd: np.ndarray, k: int) -> np.ndarray:
    """Phi((m - c) / sd) with c the cut where the expected number above it is k (bisection)."""
    from scipy.special import ndtr

    lo, hi = float((estimate - 8 * sd).min()), float((estimate + 8 * sd).max())
    for _ in range(60):
        c = (lo + hi) / 2
        if float(ndtr((estimate - c) / sd).sum()) > k:
            lo = c
        else:
            hi = c
    return ndtr((estimate - (lo + hi) / 2) / sd)


def fit_all(
    obs: pd.DataFrame,
    *,
    scales: Mapping[str, Scale],
    ideas: np.ndarray,
    predictions: pd.DataFrame | None = None,
) -> tuple[list[DimensionFit], dict[str, Ranking]]:
    """Fit every dimension of ``scales`` present in ``obs`` or ``predictions``, then rank."""
    ideas = np.unique(np.asarray(ideas, dtype=np.int64))
    dims = obs["dimension"].astype(str)
    fits = []
    for dim, scale in scales.items():
        mask = (dims == dim).to_numpy()
        pred = None
        if predictions is not None and len(predictions):
            pred = predictions[(predictions["dimension"].astype(str) == dim).to_numpy()]
        if not mask.any() and (pred is None or not len(pred)):
            continue
        fits.append(
            fit_dimension(obs[mask], dimension=dim, scale=scale, ideas=ideas, predictions=pred)
        )
    return fits, rankings(fits)


# Off-diagonal correlations of the dimensions' qualities are kept within these bounds, and the
# correlation matrix's eigenvalues at least MIN_EIGEN (a near-singular prior would let one
# dimension's reads decide another's outright).
MAX_CORRELATION = 0.95
MIN_EIGEN = 0.05
# Prediction signals that only echo the idea's reads (or a reviewer's level): they carry the
# unread reviewer's scale, which the model already holds, and no new evidence on the idea.
ECHO_SIGNALS = ("panel", "level", "text")


def independent_predictions(predictions: pd.DataFrame | None) -> pd.DataFrame | None:
    """The predictions that are new evidence on the idea: a judge that read the idea and was
    shown none of its reads (an LLM without panel evidence). Panel predictions are built from
    the idea's own reads, level predictions from the reviewer's level, and the offline judge's
    text predictions from the same reads and text the domain text model learns from: they
    would count the same evidence twice, so they enter with no weight."""
    if predictions is None or not len(predictions):
        return predictions
    keep = np.ones(len(predictions), bool)
    if "signal" in predictions:
        keep &= ~predictions["signal"].fillna("").astype(str).isin(ECHO_SIGNALS).to_numpy()
    if "panel_size" in predictions:
        keep &= pd.to_numeric(predictions["panel_size"], errors="coerce").fillna(0).to_numpy() == 0
    return predictions[keep]


def _judge_standing(
    preds: pd.DataFrame, f: DimensionFit, ideas: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per idea: the mean of the judges' predictions on the dimension as standings (standard
    units: each predicted reviewer's severity and spread taken out), and whether it has any."""
    n = len(ideas)
    p = preds[(preds["dimension"].astype(str) == f.dimension).to_numpy()]
    score = p["score"].to_numpy(dtype=float)
    ok = np.isfinite(score) & ~np.isin(score, list(f.scale.categories))
    p, score = p[ok], score[ok]
    ix = np.searchsorted(ideas, p["idea_id"].to_numpy(np.int64))
    inside = (ix < n) & (ideas[np.minimum(ix, n - 1)] == p["idea_id"].to_numpy(np.int64))
    severity = dict(zip(f.reviewers.tolist(), f.severity.tolist(), strict=True))
    spread = dict(zip(f.reviewers.tolist(), f.spread.tolist(), strict=True))
    r = p["reviewer_id"].to_numpy(np.int64).tolist()
    b = np.array([severity.get(x, 0.0) for x in r], dtype=float)
    sp = np.array([spread.get(x, 1.0) for x in r], dtype=float)
    x = (score - f.scale.floor) / f.scale.width
    z = (x - f.mu - b) / sp / math.sqrt(f.tau2)
    total = np.bincount(ix[inside], weights=z[inside], minlength=n)
    count = np.bincount(ix[inside], minlength=n)
    return np.divide(total, count, out=np.zeros(n), where=count > 0), count > 0


def dimension_correlation(ys: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """The correlation of the dimensions' qualities across ideas (D x D), from the ideas' data
    means ``ys`` (n x D, standard units) where both dimensions were read: off the diagonal the
    reading errors are independent, so the mean product estimates the covariance; each
    quality has variance 1 in these units. Clipped and made positive definite."""
    d = ys.shape[1]
    r = np.eye(d)
    for j in range(d):
        for k in range(j + 1, d):
            both = (ps[:, j] > 0) & (ps[:, k] > 0)
            if both.sum() < 10:
                continue
            w = 1.0 / (1.0 / (1.0 + 1.0 / ps[both, j]) + 1.0 / (1.0 + 1.0 / ps[both, k]))
            c = float(np.sum(w * ys[both, j] * ys[both, k]) / w.sum())
            r[j, k] = r[k, j] = float(np.clip(c, -MAX_CORRELATION, MAX_CORRELATION))
    vals, vecs = np.linalg.eigh(r)
    r = (vecs * np.maximum(vals, MIN_EIGEN)) @ vecs.T
    scale = np.sqrt(np.diag(r))
    return r / np.outer(scale, scale)


@dataclass
class DomainFit:
    """A domain's fits per dimension, its rankings (each dimension, and ALL), the text checks."""

    fits: list[DimensionFit]
    rankings: dict[str, Ranking]
    text: dict[str, object] = field(default_factory=dict)  # dimension -> TextCheck
    correlation: np.ndarray | None = None
    judges: dict[str, object] = field(default_factory=dict)  # dimension -> the judges' check
    # The same fits combined from people's reads alone (no text model, no judges).
    people_rankings: dict[str, Ranking] = field(default_factory=dict)


def fit_domain(
    obs: pd.DataFrame,
    *,
    scales: Mapping[str, Scale],
    ideas: np.ndarray,
    predictions: pd.DataFrame | None = None,
    vectors: tuple[np.ndarray, object] | None = None,
    text: bool = True,
) -> DomainFit:
    """The board's model of one domain: people's reads per dimension (fit_dimension), the
    predictions that are new evidence, the text model where its check passes, combined across
    the dimensions.

    Each dimension's fit gives every idea a data mean y and precision p (standard units of
    ideas: the quality divided by the dimension's tau). The qualities of one idea are
    correlated across dimensions (R, ``dimension_correlation``), so the idea's posterior is the
    multivariate normal one: prior N(m0, S R S) (m0 the text estimate where the domain's text
    check passes, else 0; S the prior sd, the text's error sd or 1), data N(y, diag(1/p)):

        P = (S R S)^-1 + diag(p),   m = P^-1 ((S R S)^-1 m0 + p y)

    A dimension's ranking is its marginal (m_d, P^-1_dd, back on the score scale); the overall
    is the mean of m with variance 1' P^-1 1 / D^2, so an idea nobody read has the variance of
    the mean of correlated qualities, not of independent ones. ``vectors``: (idea ids, their
    TF-IDF rows) for the text model.
    """
    from .text import NOT_CHECKED, calibrate, text_prior

    ideas = np.unique(np.asarray(ideas, dtype=np.int64))
    fits, _ = fit_all(obs, scales=scales, ideas=ideas)
    indep = independent_predictions(predictions)
    if indep is not None and len(indep):
        # Dimensions only judges scored still get a fit (no people: the prior only).
        have = {f.dimension for f in fits}
        for dim in sorted(set(indep["dimension"].astype(str)) - have):
            if dim in scales:
                fits.append(
                    fit_dimension(obs.iloc[:0], dimension=dim, scale=scales[dim], ideas=ideas)
                )
    if not fits:
        return DomainFit(fits, {})
    n, d = len(ideas), len(fits)
    ys, ps, js = np.zeros((n, d)), np.zeros((n, d)), np.zeros((n, d))
    for j, f in enumerate(fits):
        prec = f.human_precision
        num = f.quality * (prec + 1.0 / f.tau2)  # the precision-weighted data sum (a units)
        y = np.divide(num, prec, out=np.zeros(n), where=prec > 0)
        ys[:, j] = y / math.sqrt(f.tau2)
        ps[:, j] = prec * f.tau2
    people_y, people_p = ys.copy(), ps.copy()
    # What the intervals may claim of the people's precision (standard units): the
    # reviewers' effects' uncertainty taken out. It widens the intervals only: the estimates
    # weigh the readers against the text model and the other dimensions by their full
    # precision (on 20 demo seeds the text otherwise gained weight on read ideas and the
    # board's top 10 % of read ideas measured worse on the truth: 0.722 against 0.778).
    interval_p = np.column_stack(
        [
            (f.interval_precision if f.interval_precision is not None else f.human_precision)
            * f.tau2
            for f in fits
        ]
    )
    checks: dict[str, object] = {}
    judges: dict[str, object] = {}
    if indep is not None and len(indep):
        # Independent judges: per idea, the mean of their predictions with each predicted
        # reviewer's severity and spread taken out (one judge's predictions of one idea are
        # one look at it, not one per reviewer), calibrated against the people's standing of
        # the ideas both scored; used only where it beats the domain mean, as one more
        # measurement with its error variance.
        for j, f in enumerate(fits):
            t, has = _judge_standing(indep, f, ideas)
            both = has & (ps[:, j] > 0)
            if both.sum() < 10:
                continue
            beta, check = calibrate(t[both], ys[both, j], ps[both, j], what="the judges")
            judges[f.dimension] = check
            if check.used:
                jp = np.where(has, 1.0 / check.error_var, 0.0)
                yj = beta * t
                tot = ps[:, j] + jp
                ys[:, j] = np.divide(
                    ps[:, j] * ys[:, j] + jp * yj, tot, out=np.zeros(n), where=tot > 0
                )
                js[:, j] = np.divide(jp, tot, out=np.zeros(n), where=tot > 0)
                ps[:, j] = tot
    r = dimension_correlation(ys, ps)
    m0, sd0 = np.zeros((n, d)), np.ones(d)
    rows = None
    if text and vectors is not None:
        vid, matrix = vectors
        pos = np.searchsorted(np.asarray(vid), ideas)
        ok = (pos < len(vid)) & (np.asarray(vid)[np.minimum(pos, len(vid) - 1)] == ideas)
        if ok.all():
            rows = matrix[pos]  # type: ignore[index]
    for j, f in enumerate(fits):
        if rows is None:
            checks[f.dimension] = NOT_CHECKED
            continue
        # The text learns from people's reads only.
        est, check = text_prior(rows, people_y[:, j], people_p[:, j])
        checks[f.dimension] = check
        if check.used:
            m0[:, j] = est
            sd0[j] = math.sqrt(check.error_var)
    ranked = _combine(fits, ideas, ys, ps, js, m0, sd0, r)
    people = _combine(
        fits, ideas, people_y, people_p, np.zeros((n, d)), np.zeros((n, d)), np.ones(d), r
    )
    if GRADE_RESOLUTION or REVIEWER_UNCERTAINTY:
        # Coarse grades that several readers share resolve no more than their common band:
        # the people's precision of an idea on a dimension stops where that band's variance
        # is reached. It bounds the intervals only: the estimates keep the readers' full
        # weight against the text model and the correlated dimensions (letting the floor
        # reweigh them moved read ideas towards their text, and the board's top 10 % of read
        # ideas measured worse on the demo's truth: 0.722 against 0.750, 20 seeds).
        capped = np.minimum(people_p, interval_p)
        if GRADE_RESOLUTION:
            floor = resolution_floors(obs, fits, ideas)
            cap = np.divide(1.0, floor, out=np.full_like(floor, np.inf), where=floor > 0) - 1.0
            capped = np.minimum(capped, np.maximum(cap, 0.0))
        ranked = _with_sd(ranked, _combine(fits, ideas, ys, capped + ps - people_p, js, m0, sd0, r))
        people = _with_sd(
            people,
            _combine(
                fits, ideas, people_y, capped, np.zeros((n, d)), np.zeros((n, d)), np.ones(d), r
            ),
        )
    return DomainFit(fits, ranked, checks, r, judges, people)


def _with_sd(ranked: dict[str, Ranking], widths: dict[str, Ranking]) -> dict[str, Ranking]:
    """``ranked``'s estimates and shares with ``widths``' sds (the grade resolution floor)."""
    return {
        k: Ranking(rk.dimension, rk.ideas, rk.estimate, widths[k].sd, rk.judge_share)
        for k, rk in ranked.items()
    }


def _combine(
    fits: Sequence[DimensionFit],
    ideas: np.ndarray,
    ys: np.ndarray,
    ps: np.ndarray,
    js: np.ndarray,
    m0: np.ndarray,
    sd0: np.ndarray,
    r: np.ndarray,
) -> dict[str, Ranking]:
    """The multivariate posterior of ``fit_domain`` and its rankings (see there)."""
    n, d = ys.shape
    c = r * np.outer(sd0, sd0)
    c_inv = np.linalg.inv(c)
    post_p = c_inv[None, :, :] + ps[:, :, None] * np.eye(d)[None, :, :]
    cov = np.linalg.inv(post_p)
    rhs = m0 @ c_inv + ps * ys  # c_inv is symmetric
    m = np.einsum("nij,nj->ni", cov, rhs)
    # Shares of the evidence: what the text prior adds over the plain prior, and what the data
    # add over the text prior (split between people and independent judges by precision).
    prior_var = float(r.sum()) / d**2
    text_var = float(c.sum()) / d**2
    post_var = cov.sum(axis=(1, 2)) / d**2
    text_gain = max(0.0, 1.0 / text_var - 1.0 / prior_var)
    data_gain = np.maximum(0.0, 1.0 / post_var - 1.0 / text_var)
    judge_data = np.divide(
        (ps * js).sum(axis=1), ps.sum(axis=1), out=np.zeros(n), where=ps.sum(axis=1) > 0
    )
    total = text_gain + data_gain
    overall_share = np.divide(
        text_gain + data_gain * judge_data, total, out=np.zeros(n), where=total > 0
    )
    ranked: dict[str, Ranking] = {}
    for j, f in enumerate(fits):
        var_j = cov[:, j, j]
        t_gain = max(0.0, 1.0 / sd0[j] ** 2 - 1.0)
        d_gain = np.maximum(0.0, 1.0 / var_j - 1.0 / sd0[j] ** 2)
        tot = t_gain + d_gain
        ranked[f.dimension] = Ranking(
            dimension=f.dimension,
            ideas=ideas,
            estimate=f.score_scale(m[:, j] * math.sqrt(f.tau2)),
            sd=np.sqrt(var_j * f.tau2) * f.scale.width,
            judge_share=np.divide(t_gain + d_gain * js[:, j], tot, out=np.zeros(n), where=tot > 0),
        )
    ranked[ALL] = Ranking(
        dimension=ALL,
        ideas=ideas,
        estimate=m.mean(axis=1),
        sd=np.sqrt(post_var),
        judge_share=overall_share,
    )
    return ranked
