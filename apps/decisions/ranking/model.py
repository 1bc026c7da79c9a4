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
- ``sigma^2``, the reading noise, is estimated by EM: the mean over the reads of the expected
  squared residual, with the uncertainty of the quality, the severities, mu and the spreads in
  the expectation (ranking/uncertainty.py: ``severity_and_read_variance``).
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

``fit_domain`` (ranking/domain.py) combines the dimensions: each gives every idea a data mean
and precision in standard units of ideas; the idea's qualities share a multivariate normal
prior with the dimensions' correlation (and, for an idea nobody read where the domain text
model's check passes, its estimate as the prior mean, ranking/text.py); the posterior's
marginals are the dimensions' rankings, its mean over the dimensions the overall one (an idea
nobody read has the spread of the mean of correlated qualities).

Intervals are central 90 % posterior intervals; their variance also holds the uncertainty of the
reviewers' severities and spreads, of mu and of the overall's unit (each dimension's tau), and
stops at what the readers' shared coarse grades resolve (ranking/uncertainty.py,
docs/decide.md). P(top X %) is the posterior probability that the idea is among the ceil(X % of
n) best of its domain on that ranking (``top_probability``, ranking/top.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .uncertainty import (
    reviewer_effect_variance,
    severity_and_read_variance,
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

    def standard(self, score: np.ndarray) -> np.ndarray:
        """``score_scale``'s score back as a standing: the quality over tau."""
        return ((score - self.scale.floor) / self.scale.width - self.mu) / math.sqrt(self.tau2)


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
    return _fit_reads(
        *_read_columns(obs),
        dimension=dimension,
        scale=scale,
        ideas=ideas,
        predictions=predictions,
    )


def _read_columns(obs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The observations' reviewer ids, idea ids, scores and statuses as plain arrays."""
    return (
        obs["reviewer_id"].to_numpy(np.int64),
        obs["idea_id"].to_numpy(np.int64),
        obs["score"].to_numpy(dtype=float),
        obs["status"].astype(str).to_numpy(dtype=object),
    )


def _fit_reads(
    reviewer_id: np.ndarray,
    idea_id: np.ndarray,
    score: np.ndarray,
    status: np.ndarray,
    *,
    dimension: str,
    scale: Scale,
    ideas: np.ndarray,
    predictions: pd.DataFrame | None,
) -> DimensionFit:
    """``fit_dimension`` on the observations' columns (``_read_columns``)."""
    ideas = np.asarray(ideas, dtype=np.int64)
    n_obs = len(score)
    cats = np.isin(score, list(scale.categories)) if scale.categories else np.zeros(n_obs, bool)
    # A gated dimension is missing here: the gate was decided by the reviewer's own earlier
    # scores, which are in the fit, and fit_domain carries them to this dimension through
    # the correlation of the dimensions (module docstring).
    usable = (status == SCORED) & np.isfinite(score) & ~cats
    hx = (score[usable] - scale.floor) / scale.width
    hw = np.ones(len(hx))
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
    hr, hi = reviewer_id[usable], idea_id[usable]
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
    # Per human read, the variance of mu + b[r] + s[r] a[i] beyond s^2 var(a | b, mu) (below).
    read_var = np.zeros(int(human.sum()))
    # What the iterations do not change, computed once (the same arithmetic, in the same
    # order, as computing it in every iteration).
    n_h = np.bincount(r_ix, weights=hw_r, minlength=n_r)
    any_human = bool(human.any())
    read = np.bincount(i_ix[human], minlength=n_i) > 0
    any_read = bool(read.any())
    # times_w: times the reads' weights; human_part: predictions zeroed; human_rows: the
    # human reads only. The board fits people only, where every weight is 1 and every read
    # human: then the three change no value and only copied the arrays (a sixth of the fit's
    # array passes), so they are skipped.
    if human.all():
        h_i_ix, h_r_ix, h_w = i_ix, r_ix, w

        def times_w(v: np.ndarray) -> np.ndarray:
            return v

        def human_rows(v: np.ndarray) -> np.ndarray:
            return v

        def human_part(v: np.ndarray) -> np.ndarray:
            return v
    else:
        h_i_ix, h_r_ix, h_w = i_ix[human], r_ix[human], w[human]

        def times_w(v: np.ndarray) -> np.ndarray:
            return w * v

        def human_rows(v: np.ndarray) -> np.ndarray:
            return v[human]

        def human_part(v: np.ndarray) -> np.ndarray:
            return v * hw_r

    for it in range(ITERATIONS if len(x) else 0):
        # Ideas given the reviewers: a precision-weighted mean, shrunk to the prior.
        sr = s[r_ix]
        xm = x - mu
        prec = np.bincount(i_ix, weights=times_w(sr**2), minlength=n_i) / sigma2
        num = np.bincount(i_ix, weights=times_w(sr) * (xm - b[r_ix]), minlength=n_i) / sigma2
        var_a = 1.0 / (prec + 1.0 / tau2)
        a = num * var_a
        # Reviewers given the ideas (people only): severity, then spread, each with a prior.
        ai = a[i_ix]
        res = human_part(xm - sr * ai)
        # Empirical Bayes: the pseudo-reads are sigma^2 / (the severities' variance), so
        # severities that clearly differ are barely shrunk; SEVERITY_PRIOR_READS is the most.
        k_b = min(SEVERITY_PRIOR_READS, sigma2 / max(tau_b2, 1e-6))
        b = np.bincount(r_ix, weights=res, minlength=n_r) / (n_h + k_b)
        # The severities' variance component (EM): each one's posterior variance with the
        # ideas' uncertainty integrated out (ranking/uncertainty.py), not sigma^2 / reads.
        # (It changes slowly: recomputed every SEVERITY_VARIANCE_EVERY iterations.)
        if not (REVIEWER_UNCERTAINTY and any_human):
            post_b = sigma2 / (n_h + k_b)
        elif it % SEVERITY_VARIANCE_EVERY == 0:
            post_b, read_var = severity_and_read_variance(
                i_ix=h_i_ix,
                r_ix=h_r_ix,
                weight=h_w,
                spread=s,
                idea_precision=1.0 / var_a,
                n_reviewers=n_r,
                sigma2=sigma2,
                severity_prior_reads=k_b,
            )
        tau_b2 = float(np.mean(b**2 + post_b)) if n_r else 1.0
        # Spread: a ridge regression of (x - mu - b) on a, centred on 1.
        br = b[r_ix]
        vai = var_a[i_ix]
        y = human_part(xm - br)
        ai_sq = ai**2 + vai
        ai2 = human_part(ai_sq)
        k = SPREAD_PRIOR_READS * tau2
        spread_info = np.bincount(r_ix, weights=ai2, minlength=n_r) + k
        s = (np.bincount(r_ix, weights=y * ai, minlength=n_r) + k) / spread_info
        s = np.clip(s, *SPREAD_BOUNDS)
        # Global terms from people only.
        sr = s[r_ix]
        fitted = mu + br + sr * ai
        if any_human:
            resid = human_rows(x - fitted)
            mu = float(mu + resid.mean())
            # Expected squared residual includes the uncertainty of a (EM), and of what the
            # fit holds fixed while it updates a: the severities and mu (their variance and
            # covariance with a) and the spreads (each a ridge slope, variance sigma^2 /
            # its information). Without them sigma^2 came out too small, and with it every
            # interval (docs/decide.md).
            e2 = resid**2 + human_rows(sr**2 * vai)
            if REVIEWER_UNCERTAINTY:
                e2 = e2 + read_var + human_rows(ai_sq * (sigma2 / spread_info)[r_ix])
            sigma2 = max(float(e2.mean()), 1e-3)
        if any_read:
            tau2 = max(float(np.mean(a[read] ** 2 + var_a[read])), 1e-3)
    sr = s[r_ix]
    hp = np.bincount(h_i_ix, weights=human_rows(times_w(sr**2)), minlength=n_i) / sigma2
    jp = np.bincount(i_ix[~human], weights=(w * sr**2)[~human], minlength=n_i) / sigma2
    var_a = 1.0 / (hp + jp + 1.0 / tau2)
    if REVIEWER_UNCERTAINTY and human.any():
        # The severities and mu are estimates too: their uncertainty widens every idea their
        # reviewers read (ranking/uncertainty.py). The people's precision becomes the one
        # that variance implies, so fit_domain carries it on.
        var_a = (
            var_a
            + reviewer_effect_variance(
                i_ix=h_i_ix,
                r_ix=h_r_ix,
                weight=h_w,
                spread=s,
                idea_precision=1.0 / var_a,
                n_reviewers=n_r,
                sigma2=sigma2,
                severity_prior_reads=min(SEVERITY_PRIOR_READS, sigma2 / max(tau_b2, 1e-6)),
            )
            + spread_effect_variance(
                i_ix=h_i_ix,
                r_ix=h_r_ix,
                weight=h_w,
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


def fit_all(
    obs: pd.DataFrame,
    *,
    scales: Mapping[str, Scale],
    ideas: np.ndarray,
    predictions: pd.DataFrame | None = None,
) -> tuple[list[DimensionFit], dict[str, Ranking]]:
    """Fit every dimension of ``scales`` present in ``obs`` or ``predictions``, then rank."""
    ideas = np.unique(np.asarray(ideas, dtype=np.int64))
    dims = obs["dimension"].astype(str).to_numpy(dtype=object)
    # The columns the fits read, taken once and masked per dimension as arrays: masking the
    # frame (its string columns) per dimension cost a tenth of the fits.
    columns = _read_columns(obs)
    fits = []
    for dim, scale in scales.items():
        mask = dims == dim
        pred = None
        if predictions is not None and len(predictions):
            pred = predictions[(predictions["dimension"].astype(str) == dim).to_numpy()]
        if not mask.any() and (pred is None or not len(pred)):
            continue
        fits.append(
            _fit_reads(
                *(c[mask] for c in columns),
                dimension=dim,
                scale=scale,
                ideas=ideas,
                predictions=pred,
            )
        )
    return fits, rankings(fits)
