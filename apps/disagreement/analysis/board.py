"""The decision board: every idea of the catalogue with its reviewers' scores and the judges'
predictions for the reviewers who have not read it, per dimension and overall.

Calibrated (z) scores use the same rule as the contested list: z = (score - the reviewer's mean
on that dimension) / their sample standard deviation, over all their analysed scores (every
domain); a reviewer with one score or a single value everywhere gets z = 0. A prediction is
calibrated against the *target reviewer's* own mean and deviation, so "predicted +1" means "one
of their standard deviations above their norm", comparable with a calibrated score they gave.

Per (idea, dimension): ``z_mean`` (calibrated mean over the reviewers who scored it),
``z_spread`` (max - min of their z-scores: the agreement figure, lower = more agreement; None
with fewer than two scores), ``raw_mean``, ``raw_spread``, ``n_scores`` (analysed scores),
``n_category`` (category answers such as "not B2B", outside the ordinal figures unless included),
``pred_mean`` / ``pred_z_mean`` (mean predicted raw / calibrated score), ``pred_confidence``
(mean confidence), ``n_pred``, and the per-reviewer lists ``scores`` [[reviewer, raw, z]] and
``preds`` [[reviewer, predicted, confidence, z]]. The overall row (dimension "__all__") averages
the per-dimension z figures over the dimensions that have them (raw figures do not mix across
scales and are None); its lists hold each reviewer's mean z over the dimensions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .categories import category_mask

ALL = "__all__"
PREDICTION_COLUMNS = ["reviewer_id", "reviewer", "idea_id", "dimension", "score", "confidence"]
CATALOG_COLUMNS = ["idea_id", "idea", "title", "domain"]


def _num(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _r(x, digits: int = 3) -> float | None:
    x = _num(x)
    return None if x is None else round(x, digits)


def reviewer_stats(frame: pd.DataFrame, score: np.ndarray) -> pd.DataFrame:
    """Per (reviewer_id, dimension): mean, sd (ddof=1) and n of the analysed scores."""
    s = pd.DataFrame(
        {
            "reviewer_id": frame["reviewer_id"].to_numpy(),
            "dimension": frame["dimension"].astype(str).to_numpy(),
            "x": score,
        }
    )
    s = s[np.isfinite(s["x"])]
    return s.groupby(["reviewer_id", "dimension"])["x"].agg(mean="mean", sd="std", n="count")


def calibrate(values: pd.Series, stats: pd.DataFrame) -> np.ndarray:
    """z of each value against its (reviewer_id, dimension) stats (index of ``values``)."""
    st = stats.reindex(values.index)
    sd = st["sd"].to_numpy(dtype=float)
    flat = (st["n"].to_numpy(dtype=float) <= 1) | ~(sd > 0)
    z = (values.to_numpy(dtype=float) - st["mean"].to_numpy(dtype=float)) / np.where(flat, 1, sd)
    z = np.where(flat, 0.0, z)
    # No analysed score at all: nothing to calibrate against.
    return np.where(st["n"].isna().to_numpy() | np.isnan(values.to_numpy(dtype=float)), np.nan, z)


def idea_board(
    frame: pd.DataFrame,
    *,
    given: np.ndarray,
    score: np.ndarray,
    predictions: pd.DataFrame,
    catalog: pd.DataFrame,
    dims: Sequence[str],
    categories: Mapping[str, Sequence[float]] | None = None,
    include_categories: bool = False,
) -> list[dict]:
    """Board rows for every catalogue idea, every dimension in ``dims`` and "__all__".

    ``given``/``score`` are analysis_scores(frame) (all given scores / the analysed ones).
    ``predictions`` has PREDICTION_COLUMNS, one row per (reviewer, idea, dimension); rows for a
    reviewer who has any rating of that idea are dropped (they have read it).
    """
    categories = categories or {}
    stats = reviewer_stats(frame, score)
    rated = frame[["reviewer_id", "idea_id", "reviewer", "dimension"]].assign(
        raw=given,
        analysed=score,
        dimension=frame["dimension"].astype(str),
        is_cat=category_mask(frame, given, categories) if categories else False,
    )
    n_cat = {
        (int(i), str(d)): int(n)
        for (i, d), n in rated[rated["is_cat"]].groupby(["idea_id", "dimension"]).size().items()
    }
    # Category answers stay in the per-reviewer lists (named on the page) with no z.
    s = rated[np.isfinite(rated["raw"])].copy()
    s["z"] = calibrate(s.set_index(["reviewer_id", "dimension"])["analysed"], stats)
    s = s.sort_values(["idea_id", "dimension", "reviewer"], kind="stable")

    p = (
        predictions[PREDICTION_COLUMNS].copy()
        if len(predictions)
        else pd.DataFrame(columns=PREDICTION_COLUMNS)
    )
    p["dimension"] = p["dimension"].astype(str)
    if len(p):
        # (reviewer, idea) pairs as one int64 key each: "has this reviewer read this idea".
        width = int(max(frame["idea_id"].max() if len(frame) else 0, p["idea_id"].max())) + 1
        read = frame["reviewer_id"].to_numpy(np.int64) * width + frame["idea_id"].to_numpy(np.int64)
        asked = p["reviewer_id"].to_numpy(np.int64) * width + p["idea_id"].to_numpy(np.int64)
        p = p[~np.isin(asked, read) & p["score"].notna().to_numpy()]
    p = p.copy()
    p["score"] = p["score"].astype(float)
    p["confidence"] = pd.to_numeric(p["confidence"], errors="coerce").astype(float)
    analysed = p["score"].to_numpy(dtype=float)
    if categories and not include_categories and len(p):
        analysed = np.where(category_mask(p, analysed, categories), np.nan, analysed)
    p["analysed"] = analysed
    p["z"] = (
        calibrate(p.set_index(["reviewer_id", "dimension"])["analysed"], stats) if len(p) else []
    )
    p = p.sort_values(["idea_id", "dimension", "reviewer"], kind="stable")

    per_dim: dict[tuple[int, str], dict] = {}
    for (idea_id, dim), entry in _grouped_scores(s).items():
        per_dim[(idea_id, dim)] = entry
    for (idea_id, dim), entry in _grouped_predictions(p).items():
        per_dim.setdefault((idea_id, dim), {}).update(entry)

    empty: dict[str, Any] = {
        "n_scores": 0,
        "n_category": 0,
        "raw_mean": None,
        "raw_spread": None,
        "z_mean": None,
        "z_spread": None,
        "scores": [],
        "n_pred": 0,
        "pred_mean": None,
        "pred_z_mean": None,
        "pred_confidence": None,
        "preds": [],
    }
    rows: list[dict] = []
    z_by_idea: dict[int, list] = {}
    zmean = s[s["z"].notna()].groupby(["idea_id", "reviewer"])["z"].mean()
    for idea_id, rv, z in zip(
        zmean.index.get_level_values(0).tolist(),
        zmean.index.get_level_values(1).astype(str).tolist(),
        _rounded(zmean.to_numpy(), 3),
        strict=True,
    ):
        z_by_idea.setdefault(idea_id, []).append([rv, None, z])
    pz_by_idea: dict[int, list] = {}
    if len(p):
        agg = p.groupby(["idea_id", "reviewer"]).agg(z=("z", "mean"), c=("confidence", "mean"))
        for (idea_id, rv), z, c in zip(agg.index, agg["z"], agg["c"], strict=True):
            pz_by_idea.setdefault(int(idea_id), []).append([str(rv), None, _r(c, 0), _r(z)])
    for idea in catalog[CATALOG_COLUMNS].itertuples(index=False):
        base = {
            "domain": str(idea.domain),
            "idea_id": int(idea.idea_id),
            "idea": str(idea.idea),
            "title": str(idea.title),
        }
        found = []
        for dim in dims:
            entry = {**empty, **per_dim.get((int(idea.idea_id), dim), {})}
            entry["n_category"] = n_cat.get((int(idea.idea_id), dim), 0)
            rows.append({**base, "dimension": dim, **entry})
            found.append(entry)

        def mean_of(key: str, found: list[dict] = found) -> float | None:
            vals = [e[key] for e in found if e[key] is not None]
            return _num(sum(vals) / len(vals)) if vals else None

        scores = z_by_idea.get(int(idea.idea_id), [])
        preds = pz_by_idea.get(int(idea.idea_id), [])
        rows.append(
            {
                **base,
                "dimension": ALL,
                "n_scores": len(scores),
                "n_category": sum(e["n_category"] for e in found),
                "raw_mean": None,
                "raw_spread": None,
                "z_mean": mean_of("z_mean"),
                "z_spread": mean_of("z_spread"),
                "scores": scores,
                "n_pred": len(preds),
                "pred_mean": None,
                "pred_z_mean": mean_of("pred_z_mean"),
                "pred_confidence": mean_of("pred_confidence"),
                "preds": preds,
            }
        )
    return rows


def _floats(values: np.ndarray) -> list[float | None]:
    """Floats for JSON, None where not finite (vectorised _num)."""
    arr = np.asarray(values, dtype=float)
    out = arr.tolist()
    for i in np.flatnonzero(~np.isfinite(arr)).tolist():
        out[i] = None
    return out


def _rounded(values: np.ndarray, digits: int) -> list[float | None]:
    """Rounded floats for JSON, None where missing (vectorised; _r for one value)."""
    arr = np.round(np.asarray(values, dtype=float), digits)
    out = arr.tolist()
    bad = np.flatnonzero(~np.isfinite(arr)).tolist()
    for i in bad:
        out[i] = None
    return out


def _boundaries(frame: pd.DataFrame) -> tuple[list[tuple[int, str]], np.ndarray]:
    """Group keys and start offsets of a frame sorted by (idea_id, dimension)."""
    ideas = frame["idea_id"].to_numpy()
    dims = frame["dimension"].to_numpy()
    if len(frame) == 0:
        return [], np.zeros(0, dtype=np.int64)
    change = np.r_[True, (ideas[1:] != ideas[:-1]) | (dims[1:] != dims[:-1])]
    starts = np.flatnonzero(change)
    keys = [(int(ideas[i]), str(dims[i])) for i in starts.tolist()]
    return keys, starts


def _grouped_scores(s: pd.DataFrame) -> dict[tuple[int, str], dict]:
    """Per (idea, dimension) figures of the given scores, with vectorised reductions."""
    keys, starts = _boundaries(s)
    if not keys:
        return {}
    raw = s["raw"].to_numpy(float)
    an = s["analysed"].to_numpy(float)
    z = s["z"].to_numpy(float)
    af = np.isfinite(an)
    n_an = np.add.reduceat(af.astype(np.int64), starts)
    raw_sum = np.add.reduceat(np.where(af, an, 0.0), starts)
    raw_max = np.maximum.reduceat(np.where(af, an, -np.inf), starts)
    raw_min = np.minimum.reduceat(np.where(af, an, np.inf), starts)
    zf = np.isfinite(z)
    z_n = np.add.reduceat(zf.astype(np.int64), starts)
    z_sum = np.add.reduceat(np.where(zf, z, 0.0), starts)
    z_max = np.maximum.reduceat(np.where(zf, z, -np.inf), starts)
    z_min = np.minimum.reduceat(np.where(zf, z, np.inf), starts)
    # map(list, zip(...)) builds the million small lists in C, twice as fast as a comprehension.
    cells = list(
        map(
            list,
            zip(s["reviewer"].astype(str).tolist(), _rounded(raw, 0), _rounded(z, 3), strict=True),
        )
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        raw_mean = _floats(np.where(n_an > 0, raw_sum / np.maximum(n_an, 1), np.nan))
        raw_spread = _floats(np.where(n_an >= 2, raw_max - raw_min, np.nan))
        z_mean = _floats(np.where(z_n > 0, z_sum / np.maximum(z_n, 1), np.nan))
        z_spread = _floats(np.where(z_n >= 2, z_max - z_min, np.nan))
    bounds = np.r_[starts, len(s)].tolist()
    n_scores = n_an.tolist()
    return {
        key: {
            "n_scores": n_scores[j],
            "raw_mean": raw_mean[j],
            "raw_spread": raw_spread[j],
            "z_mean": z_mean[j],
            "z_spread": z_spread[j],
            "scores": cells[bounds[j] : bounds[j + 1]],
        }
        for j, key in enumerate(keys)
    }


def _grouped_predictions(p: pd.DataFrame) -> dict[tuple[int, str], dict]:
    keys, starts = _boundaries(p)
    if not keys:
        return {}
    a_ = p["analysed"].to_numpy(float)
    z = p["z"].to_numpy(float)
    conf = p["confidence"].to_numpy(float)
    n = np.diff(np.r_[starts, len(p)])

    def fmean(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        f = np.isfinite(v)
        return (
            np.add.reduceat(np.where(f, v, 0.0), starts),
            np.add.reduceat(f.astype(np.int64), starts),
        )

    (a_sum, a_n), (z_sum, z_n), (c_sum, c_n) = fmean(a_), fmean(z), fmean(conf)
    cells = [
        [rv, x, c, zz]
        for rv, x, c, zz in zip(
            p["reviewer"].astype(str).tolist(),
            _rounded(p["score"].to_numpy(float), 0),
            _rounded(conf, 0),
            _rounded(z, 3),
            strict=True,
        )
    ]
    out = {}
    for j, key in enumerate(keys):
        a, b = int(starts[j]), int(starts[j] + n[j])
        out[key] = {
            "n_pred": int(n[j]),
            "pred_mean": _num(a_sum[j] / a_n[j]) if a_n[j] else None,
            "pred_z_mean": _num(z_sum[j] / z_n[j]) if z_n[j] else None,
            "pred_confidence": _num(c_sum[j] / c_n[j]) if c_n[j] else None,
            "preds": cells[a:b],
        }
    return out
