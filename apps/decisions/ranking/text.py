"""The domain text model: what an idea's text says about its standing, for ideas nobody read.

Per domain and dimension, a ridge regression on the ideas' TF-IDF rows (the offline judge's
stored representation, apps/judges/engine/item_text.py) learns the people's standing of every
read idea: ``y`` = the idea's data mean in standard units of ideas (each read with its
reviewer's severity and spread taken out by the model; unshrunk), weighted by its reliability
``p / (1 + p)`` (p: the reads' precision in the same units). Then:

- **Cross-validated check** (``FOLDS`` folds): each read idea is predicted by a model that never
  saw it. The text's squared error (y - beta t)^2 is compared idea by idea with the domain
  mean's, y^2 (both carry the same reading noise 1/p, which cancels in the difference). The
  text is used only when the 90 % interval of the mean difference lies below 0: it beats the
  domain mean. Otherwise it says so and stays out (``TextCheck.used`` False, its reason).
- **Calibration**: the text estimate is beta * t (beta: the weighted least-squares slope of y on
  the out-of-fold t), its error variance ``error_var`` the weighted mean of (y - beta t)^2 - 1/p
  (the reading noise taken out), at least MIN_ERROR_VAR.
- **Estimates**: an unread idea gets the full model's; a read idea its out-of-fold one.

The board uses N(beta t, error_var) as the prior on that dimension, instead of N(0, 1), of the
ideas nobody read (apps/decisions/ranking/domain.py: ``fit_domain``); a read idea rests on its
reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse

FOLDS = 10
# Fewer read ideas than this: no model (nothing to learn from, nothing to check against).
MIN_TRAIN = 20
# Ridge penalty on the L2-normalised TF-IDF rows (chosen on the demo; the check guards it).
ALPHA = 0.3
# At most this many read ideas train one model (a random subset; the solves grow with them).
MAX_TRAIN = 1500
# From this many training rows on, the fold solves are iterative on the sparse rows (below it
# the dense solve takes a few milliseconds, and keeps small boards exact to rounding).
ITERATIVE_FROM = 600
# The iterative solves stop at this relative residual: the estimates then agree with the
# direct solves to about 1e-7 (the board shows three digits); 1e-10 took a third more steps.
ITERATIVE_TOLERANCE = 1e-7
ITERATIVE_MAX_STEPS = 2000
# The text estimate's error variance never goes below this (standard units of ideas).
MIN_ERROR_VAR = 0.05
Z90 = 1.6448536269514722


@dataclass(frozen=True)
class TextCheck:
    """The cross-validated check of one domain and dimension's text model."""

    used: bool
    n_train: int
    gain: float  # the domain mean's squared error minus the text's (> 0: text better)
    gain_low: float  # its 90 % interval
    gain_high: float
    error_var: float  # the text estimate's error variance (standard units); 1 = says nothing
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {
            "used": self.used,
            "n_train": self.n_train,
            "gain": round(self.gain, 3),
            "gain_low": round(self.gain_low, 3),
            "gain_high": round(self.gain_high, 3),
            "error_var": round(self.error_var, 3),
            "reason": self.reason,
        }


NOT_CHECKED = TextCheck(False, 0, 0.0, 0.0, 0.0, 1.0, "no text model for this domain")


def _solve(k: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, float]:
    """Weighted ridge regression in its dual form (read ideas << terms): with the kernel
    K = X X' of the training rows, c = (K + ALPHA W^-1)^-1 (y - ybar); a prediction is
    K(x, X) c + ybar (ybar the weighted mean: the intercept is not penalised)."""
    ybar = float(np.sum(w * y) / np.sum(w))
    a = k.copy()
    a[np.diag_indices_from(a)] += ALPHA / np.maximum(w, 1e-9)
    return np.linalg.solve(a, y - ybar), ybar


def _fold_solves(
    k: np.ndarray, y: np.ndarray, w: np.ndarray, folds: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float]:
    """What ``_solve`` on each fold's training rows and on all of them gives, from one
    factorisation: (the out-of-fold predictions, the full model's c, its ybar).

    With A = K + ALPHA W^-1 over all the rows and B = A^-1, a fold's model predicts its test
    rows S from its training rows T as K_ST A_TT^-1 (y_T - ybar_T) + ybar_T, and since A's
    off-diagonal blocks are K's, K_ST A_TT^-1 r_T = r_S - (B_SS)^-1 (B r)_S for any r (the
    block inverse's Schur complement). B r is u - ybar_T v with u = B y and v = B 1, so one
    Cholesky factorisation of A (A = L L'), L's inverse for the blocks B_SS = L^-1_S' L^-1_S
    and a small solve per fold replace one LU solve of A_TT per fold (several times fewer
    operations; the same numbers to rounding)."""
    from scipy.linalg import cho_solve, lapack

    a = k.astype(float)
    a[np.diag_indices_from(a)] += ALPHA / np.maximum(w, 1e-9)
    low, info = lapack.dpotrf(a, lower=1, clean=1, overwrite_a=1)
    if info != 0:  # not positive definite to working precision: solve fold by fold
        return _fold_solves_directly(k, y, w, folds)
    u, v = cho_solve((low, True), np.column_stack([y, np.ones(len(y))]), check_finite=False).T
    inv_low, info = lapack.dtrtri(low, lower=1)
    if info != 0:
        return _fold_solves_directly(k, y, w, folds)
    oof = np.zeros(len(y))
    for f in range(FOLDS):
        test = folds == f
        if test.all() or not test.any():
            continue
        train = ~test
        ybar = float(np.sum(w[train] * y[train]) / np.sum(w[train]))
        cols = inv_low[:, test]
        z = u[test] - ybar * v[test]
        oof[test] = y[test] - np.linalg.solve(cols.T @ cols, z)
    ybar = float(np.sum(w * y) / np.sum(w))
    return oof, u - ybar * v, ybar


def _fold_solves_iterative(
    x: sparse.csr_matrix, y: np.ndarray, w: np.ndarray, folds: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float]:
    """``_fold_solves`` without the kernel: each fold's system and the full one solved by
    preconditioned conjugate gradients on the sparse rows ``x`` (K v applied as X (X' v)).

    A text row holds a few dozen terms, so a product with X costs a few operations per
    stored term, where the dense kernel's factorisation is cubic in the training rows (0.08
    s per dimension at MAX_TRAIN, most of the decision recompute at 1M ratings). The systems
    are well conditioned (ALPHA / w on the diagonal; a Jacobi preconditioner takes out its
    spread): tens of steps reach ITERATIVE_TOLERANCE, and the results agree with the direct
    solves to about 1e-7 (``tests/decisions/ranking/test_mechanics.py``).

    The FOLDS + 1 systems are the columns of one block, each masked to its training rows, so
    they share every product with X: scipy's ``cg`` solves one system at a time and took
    three times as long on the 1M bench (2.6 s against 0.8 s for its 60 dimensions)."""
    n = len(y)
    train = np.column_stack([folds != f for f in range(FOLDS)] + [np.ones(n, bool)])
    mask = train.astype(float)
    ybars = (w @ (mask * y[:, None])) / (w @ mask)
    ridge = (ALPHA / np.maximum(w, 1e-9))[:, None]
    jacobi = mask / (np.asarray(x.multiply(x).sum(axis=1)) + ridge)
    xt = x.T.tocsr()

    def system(v: np.ndarray) -> np.ndarray:
        return (np.asarray(x @ (xt @ v)) + ridge * v) * mask

    rhs = (y[:, None] - ybars) * mask
    c = np.zeros_like(rhs)
    residual = rhs.copy()
    z = jacobi * residual
    direction = z.copy()
    rz = np.sum(residual * z, axis=0)
    stop = ITERATIVE_TOLERANCE**2 * np.sum(rhs * rhs, axis=0)
    for _ in range(ITERATIVE_MAX_STEPS):
        if (np.sum(residual * residual, axis=0) <= stop).all():
            break
        moved = system(direction)
        curvature = np.sum(direction * moved, axis=0)
        step = np.divide(rz, curvature, out=np.zeros_like(rz), where=curvature > 0)
        c += step * direction
        residual -= step * moved
        z = jacobi * residual
        rz_next = np.sum(residual * z, axis=0)
        direction = z + np.divide(rz_next, rz, out=np.zeros_like(rz), where=rz > 0) * direction
        rz = rz_next
    else:  # not converged (never seen): the dense factorisation
        return _fold_solves((x @ x.T).toarray(), y, w, folds)
    fitted = np.asarray(x @ (xt @ c))
    oof = np.zeros(n)
    for f in range(FOLDS):
        test = folds == f
        oof[test] = fitted[test, f] + ybars[f]
    return oof, c[:, FOLDS], float(ybars[FOLDS])


def _fold_solves_directly(
    k: np.ndarray, y: np.ndarray, w: np.ndarray, folds: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float]:
    """``_fold_solves`` by one ``_solve`` per fold (where A is not numerically positive
    definite)."""
    oof = np.zeros(len(y))
    for f in range(FOLDS):
        test = folds == f
        if test.all() or not test.any():
            continue
        train = ~test
        c, ybar = _solve(k[np.ix_(train, train)], y[train], w[train])
        oof[test] = k[np.ix_(test, train)] @ c + ybar
    c, ybar = _solve(k, y, w)
    return oof, c, ybar


def calibrate(t: np.ndarray, y: np.ndarray, p: np.ndarray, *, what: str) -> tuple[float, TextCheck]:
    """(beta, check) of an out-of-sample estimate ``t`` of the read ideas' standing ``y``
    (precision ``p``; standard units): the slope, the gain over the domain mean idea by idea
    with its 90 % interval, and the error variance of beta * t (module docstring)."""
    n = len(y)
    w = p / (1.0 + p)
    denom = float(np.sum(w * t**2))
    beta = max(0.0, float(np.sum(w * t * y)) / denom) if denom > 0 else 0.0
    diff = y**2 - (y - beta * t) ** 2  # the gain over the domain mean, per idea
    sw = float(w.sum())
    gain = float(np.sum(w * diff) / sw)
    var = float(np.sum(w * (diff - gain) ** 2) / sw)
    n_eff = sw**2 / float(np.sum(w**2))
    se = math.sqrt(var / max(n_eff - 1, 1.0))
    low, high = gain - Z90 * se, gain + Z90 * se
    err = float(np.sum(w * ((y - beta * t) ** 2 - 1.0 / p)) / sw)
    err = min(1.0, max(MIN_ERROR_VAR, err))
    interval = f"gain {gain:+.2f} [{low:+.2f}, {high:+.2f}]"
    if beta <= 0 or low <= 0:
        reason = f"{what} does not beat the domain mean on {n} read ideas ({interval})"
        return 0.0, TextCheck(False, n, gain, low, high, 1.0, reason)
    reason = (
        f"{what} beats the domain mean on {n} read ideas ({interval}, error variance "
        f"{err:.2f} of 1)"
    )
    return beta, TextCheck(True, n, gain, low, high, err, reason)


def text_prior(
    x: sparse.csr_matrix,
    y: np.ndarray,
    p: np.ndarray,
    *,
    seed: int = 0,
    kernels: dict[bytes, np.ndarray] | None = None,
) -> tuple[np.ndarray, TextCheck]:
    """(the text estimate of every row of ``x``, the check). ``y`` and ``p`` per row: the data
    mean and its precision in standard units (p = 0: unread, y ignored).

    ``kernels``: a dict the caller keeps across the dimensions of one domain (the same ``x``).
    Dimensions read on the same ideas train on the same rows, so the kernel of the last one is
    kept there and reused instead of computed again (gated dimensions, read on fewer ideas,
    need their own)."""
    n = x.shape[0]
    read = p > 0
    n_train = int(read.sum())
    if n_train < MIN_TRAIN or x.shape[1] < 2:
        return np.zeros(n), TextCheck(
            False, n_train, 0.0, 0.0, 0.0, 1.0, f"{n_train} read ideas: too few to learn from"
        )
    idx = np.flatnonzero(read)
    if len(idx) > MAX_TRAIN:  # a random subset keeps the dual solve small at scale
        idx = np.sort(np.random.default_rng(seed).choice(idx, MAX_TRAIN, replace=False))
        n_train = MAX_TRAIN
    xr, yr, pr = x[idx], y[idx], p[idx]
    w = pr / (1.0 + pr)
    folds = np.random.default_rng(seed).permutation(n_train) % FOLDS
    if n_train >= ITERATIVE_FROM:
        oof, c, ybar = _fold_solves_iterative(sparse.csr_matrix(xr), yr, w, folds)
    else:
        key = idx.tobytes()
        k = kernels.get(key) if kernels is not None else None
        if k is None:
            k = (xr @ xr.T).toarray().astype(float)
            if kernels is not None:
                kernels.clear()  # one kernel kept: memory stays one (train x train) matrix
                kernels[key] = k
        oof, c, ybar = _fold_solves(k, yr, w, folds)
    beta, check = calibrate(oof, yr, pr, what="the text")
    if not check.used:
        return np.zeros(n), check
    # X (Xr' c): a sparse product with one vector, not the (ideas x read ideas) matrix.
    est = beta * (np.asarray(x @ (xr.T @ c)).ravel() + ybar)
    est[idx] = beta * oof
    return est, check
