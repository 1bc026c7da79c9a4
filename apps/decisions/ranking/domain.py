"""The board's model of one domain: the dimensions' fits (ranking/model.py) combined.

Each dimension gives every idea a data mean and precision in standard units of ideas; the
idea's qualities share a multivariate normal prior with the dimensions' correlation (and, for an
idea nobody read where the domain text model's check passes, its estimate as the prior mean,
ranking/text.py); the posterior's marginals are the dimensions' rankings, its mean over the
dimensions the overall one. Judges enter only as predictions that are new evidence on the idea
(``independent_predictions``), as one calibrated measurement per idea. See ``fit_domain`` and
docs/decide.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import model
from .model import ALL, DimensionFit, Ranking, Scale, fit_all, fit_dimension
from .uncertainty import resolution_floors, standardising_variance

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
    multivariate normal one: prior N(m0, S R S) (for an idea nobody read, m0 the text estimate
    where the domain's text check passes and S the text's error sd; else m0 = 0 and S = 1),
    data N(y, diag(1/p)):

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
    # precision (ranking/uncertainty.py, docs/decide.md).
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
    kernels: dict[bytes, np.ndarray] = {}
    for j, f in enumerate(fits):
        if rows is None:
            checks[f.dimension] = NOT_CHECKED
            continue
        # The text learns from people's reads only.
        est, check = text_prior(rows, people_y[:, j], people_p[:, j], kernels=kernels)
        checks[f.dimension] = check
        if check.used:
            m0[:, j] = est
            sd0[j] = math.sqrt(check.error_var)
    # The text is the prior of the ideas nobody read only: a read idea's standing rests on its
    # reads (and the judges that read it). The text model learns what these reviewers
    # perceive, so on a read idea it restates the readers' shared view rather than adding to
    # it; on the demo's truth it made the read ideas' top 10 % worse (docs/decide.md).
    unread = people_p.sum(axis=1) == 0
    # Where no judge that read the ideas and no text model entered (their checks failed, or
    # there are none), the board's inputs are the people's, and so is every combination below:
    # the same arithmetic on the same numbers, done once.
    echo = not js.any() and not any(getattr(c, "used", False) for c in checks.values())
    ranked = _combine(fits, ideas, ys, ps, js, m0, sd0, r, text_rows=unread)
    zeros = np.zeros((n, d))
    people = (
        ranked if echo else _combine(fits, ideas, people_y, people_p, zeros, zeros, np.ones(d), r)
    )
    if model.GRADE_RESOLUTION or model.REVIEWER_UNCERTAINTY:
        # Coarse grades that several readers share resolve no more than their common band:
        # the people's precision of an idea on a dimension stops where that band's variance
        # is reached. Both bound the intervals only: the estimates keep the readers' full
        # weight against the judges and the correlated dimensions (letting the floor reweigh
        # them measured worse on the demo's truth, docs/decide.md).
        capped = np.minimum(people_p, interval_p)
        if model.GRADE_RESOLUTION:
            floor = resolution_floors(obs, fits, ideas)
            cap = np.divide(1.0, floor, out=np.full_like(floor, np.inf), where=floor > 0) - 1.0
            capped = np.minimum(capped, np.maximum(cap, 0.0))
        widths = _combine(
            fits, ideas, ys, capped + (ps - people_p), js, m0, sd0, r, text_rows=unread
        )
        ranked = _with_sd(ranked, widths)
        people = (
            ranked
            if echo
            else _with_sd(
                people, _combine(fits, ideas, people_y, capped, zeros, zeros, np.ones(d), r)
            )
        )
    if model.REVIEWER_UNCERTAINTY:
        # The overall ranking states standings in units of each dimension's tau, itself an
        # estimate: its uncertainty widens the intervals of the ideas far from the average.
        unit_var = standardising_variance(people_p)
        ranked = _with_unit_uncertainty(ranked, fits, unit_var)
        people = ranked if echo else _with_unit_uncertainty(people, fits, unit_var)
    return DomainFit(fits, ranked, checks, r, judges, people)


def _combine(
    fits: Sequence[DimensionFit],
    ideas: np.ndarray,
    ys: np.ndarray,
    ps: np.ndarray,
    js: np.ndarray,
    m0: np.ndarray,
    sd0: np.ndarray,
    r: np.ndarray,
    *,
    text_rows: np.ndarray | None = None,
) -> dict[str, Ranking]:
    """The multivariate posterior of ``fit_domain`` and its rankings (see there); the ideas
    of ``text_rows`` take the text prior N(m0, S R S), the others (all, by default) N(0, R)."""
    n, d = ys.shape
    if text_rows is None:
        text_rows = np.zeros(n, bool)
    c = r * np.outer(sd0, sd0)
    c_inv = np.linalg.inv(c)
    r_inv = np.linalg.inv(r)
    prior_p = np.where(text_rows[:, None, None], c_inv[None, :, :], r_inv[None, :, :])
    post_p = prior_p + ps[:, :, None] * np.eye(d)[None, :, :]
    cov = np.linalg.inv(post_p)
    rhs = np.where(text_rows[:, None], m0 @ c_inv, 0.0) + ps * ys  # c_inv is symmetric
    m = np.einsum("nij,nj->ni", cov, rhs)
    # Shares of the evidence: what the text prior adds over the plain prior, and what the data
    # add over the idea's prior (split between people and independent judges by precision).
    prior_var = float(r.sum()) / d**2
    text_var = np.where(text_rows, float(c.sum()) / d**2, prior_var)
    post_var = cov.sum(axis=(1, 2)) / d**2
    text_gain = np.maximum(0.0, 1.0 / text_var - 1.0 / prior_var)
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
        prior_j = np.where(text_rows, sd0[j] ** 2, 1.0)
        t_gain = np.maximum(0.0, 1.0 / prior_j - 1.0)
        d_gain = np.maximum(0.0, 1.0 / var_j - 1.0 / prior_j)
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


def _with_sd(ranked: dict[str, Ranking], widths: dict[str, Ranking]) -> dict[str, Ranking]:
    """``ranked``'s estimates and shares with ``widths``' sds (the intervals' own terms)."""
    return {
        k: Ranking(rk.dimension, rk.ideas, rk.estimate, widths[k].sd, rk.judge_share)
        for k, rk in ranked.items()
    }


def _with_unit_uncertainty(
    ranked: dict[str, Ranking], fits: Sequence[DimensionFit], unit_var: np.ndarray
) -> dict[str, Ranking]:
    """``ranked`` with the overall sd widened by the uncertainty of the dimensions' units: a
    dimension's standing z = a / tau moves by -z times tau's relative error, independently
    across the dimensions (``standardising_variance``), and the overall is their mean."""
    overall = ranked[ALL]
    extra = np.zeros(len(overall.ideas))
    for f, v in zip(fits, unit_var, strict=True):
        z = f.standard(ranked[f.dimension].estimate)
        extra += z**2 * v
    sd = np.sqrt(overall.sd**2 + extra / len(fits) ** 2)
    out = dict(ranked)
    out[ALL] = Ranking(overall.dimension, overall.ideas, overall.estimate, sd, overall.judge_share)
    return out
