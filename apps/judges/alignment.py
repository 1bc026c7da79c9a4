"""Judge alignment metrics: pure functions over pandas frames, importable without Django.

Input frame ("finals"), one row per judge final prediction whose target reviewer scored the item:
  reviewer_id, idea_id, domain, dimension, kind, k, pred (float, NaN when nothing kept),
  truth (float, the reviewer's own score), reason (str), kept, discarded, failed (ints).

Definitions follow SPEC "Metrics" and paper 001 section 5:
- alignment: Krippendorff's alpha between the judge's final predictions and the target reviewer's
  scores, units = (reviewer, idea), two coders (reviewer, judge), per configuration, k, dimension;
- coarse alignment at the largest k: Jaccard of the reviewer's and the judge's above-median sets
  (each median within itself, over the same items) and top-50% overlap (share of the reviewer's
  items at or above their median that the judge also puts at or above its own median), averaged
  over reviewers;
- discard rate: predictions discarded for low confidence over predictions that returned a score;
- reasoning structure: per reviewer pair with shared items, agreement (mean alpha over shared
  dimensions) against the cosine similarity of their judges' reasons on the same items.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

try:  # the project's shared implementation (apps/disagreement/analysis)
    from apps.disagreement.analysis.alpha import krippendorff_alpha as _shared_alpha
    from apps.disagreement.analysis.coarse import jaccard as _jaccard
except ImportError:  # pragma: no cover - only while the analysis core is not installed
    _shared_alpha = None
    _jaccard = None

KIND_ORDER = ["zero_shot", "aggregate", "personalized"]


def _clean(x: float | None) -> float | None:
    if x is None:
        return None
    try:
        xf = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(xf) or math.isinf(xf) else xf


def _ordinal_alpha_fallback(data: np.ndarray, values: list[float] | None) -> float:
    """Krippendorff's ordinal alpha (coincidence matrix); only if the shared one is absent."""
    vals = sorted(values) if values else sorted({v for v in data.flatten() if not np.isnan(v)})
    index = {v: i for i, v in enumerate(vals)}
    m = len(vals)
    if m < 2:
        return float("nan")
    o = np.zeros((m, m))
    for unit in data.T:
        present = [v for v in unit if not np.isnan(v)]
        mu = len(present)
        if mu < 2:
            continue
        for a in range(mu):
            for b in range(mu):
                if a != b:
                    o[index[present[a]], index[present[b]]] += 1.0 / (mu - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n <= 1:
        return float("nan")
    delta = np.zeros((m, m))
    for c in range(m):
        for k in range(m):
            lo, hi = min(c, k), max(c, k)
            delta[c, k] = (n_c[lo : hi + 1].sum() - (n_c[c] + n_c[k]) / 2.0) ** 2
    d_o = (o * delta).sum()
    d_e = (np.outer(n_c, n_c) * delta).sum()
    if d_e == 0:
        return float("nan")
    return float(1.0 - (n - 1) * d_o / d_e)


def alpha(
    data: np.ndarray, *, values: list[float] | None = None, level: str = "ordinal"
) -> float | None:
    """Alpha over a coders x units matrix (NaN = missing); None when undefined."""
    if data.size == 0:
        return None
    try:
        if _shared_alpha is not None:
            result = _shared_alpha(data, level=level, values=values)
        else:
            result = _ordinal_alpha_fallback(data, values)
    except (ValueError, ZeroDivisionError):
        return None
    return _clean(result)


def jaccard(a: set, b: set) -> float | None:
    if _jaccard is not None:
        return _clean(_jaccard(a, b))
    union = a | b
    return None if not union else len(a & b) / len(union)


def _values(scales: dict[str, tuple[int, int]], dimension: str) -> list[float] | None:
    if dimension not in scales:
        return None
    lo, hi = scales[dimension]
    return [float(v) for v in range(lo, hi + 1)]


def judge_vs_truth_alpha(
    group: pd.DataFrame, values: list[float] | None
) -> tuple[float | None, int]:
    """Alpha between predictions and truths of one group; n = items where the judge kept a score."""
    g = group.dropna(subset=["truth"])
    data = np.vstack([g["truth"].to_numpy(float), g["pred"].to_numpy(float)])
    n = int(g["pred"].notna().sum())
    return (alpha(data, values=values) if n >= 2 else None), n


def alignment_curve(
    finals: pd.DataFrame, *, scales: dict[str, tuple[int, int]], by_reviewer: bool = False
) -> list[dict[str, Any]]:
    """Alpha per (kind, k, dimension) [and reviewer]: the series behind paper 001's Figure 2."""
    if finals.empty:
        return []
    keys = ["dimension", "kind", "k"] + (["reviewer_id"] if by_reviewer else [])
    rows = []
    for key, group in finals.groupby(keys, sort=True):
        values = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        a, n = judge_vs_truth_alpha(group, _values(scales, values["dimension"]))
        values["k"] = int(values["k"])
        if "reviewer_id" in values:
            values["reviewer_id"] = int(values["reviewer_id"])
        kept, discarded = int(group["kept"].sum()), int(group["discarded"].sum())
        rows.append(
            {
                **values,
                "alpha": a,
                "n": n,
                "n_targets": int(len(group)),
                "discard_rate": (discarded / (kept + discarded)) if kept + discarded else None,
            }
        )
    rows.sort(key=lambda r: (r["dimension"], _kind_pos(r["kind"]), r["k"]))
    return rows


def _kind_pos(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def coarse_alignment(finals: pd.DataFrame, *, k: int | None = None) -> list[dict[str, Any]]:
    """Above-median Jaccard and top-50% overlap per (kind, dimension) at k (default: largest k)."""
    if finals.empty:
        return []
    rows = []
    for (dimension, kind), group in finals.groupby(["dimension", "kind"], sort=True):
        use_k = int(group["k"].max()) if k is None else k
        g = group[(group["k"] == use_k)].dropna(subset=["pred", "truth"])
        jaccards, overlaps = [], []
        for _, rg in g.groupby("reviewer_id"):
            if len(rg) < 2:
                continue
            t_med, p_med = rg["truth"].median(), rg["pred"].median()
            t_above = set(rg.loc[rg["truth"] > t_med, "idea_id"])
            p_above = set(rg.loc[rg["pred"] > p_med, "idea_id"])
            j = jaccard(t_above, p_above)
            if j is not None:
                jaccards.append(j)
            t_top = set(rg.loc[rg["truth"] >= t_med, "idea_id"])
            p_top = set(rg.loc[rg["pred"] >= p_med, "idea_id"])
            if t_top:
                overlaps.append(len(t_top & p_top) / len(t_top))
        rows.append(
            {
                "dimension": dimension,
                "kind": kind,
                "k": use_k,
                "jaccard": _clean(np.mean(jaccards)) if jaccards else None,
                "top50_overlap": _clean(np.mean(overlaps)) if overlaps else None,
                "n_reviewers": len(overlaps),
            }
        )
    rows.sort(key=lambda r: (r["dimension"], _kind_pos(r["kind"])))
    return rows


def discard_rates(predictions: pd.DataFrame) -> list[dict[str, Any]]:
    """Share of scored predictions discarded for low confidence, per domain and dimension.

    predictions: one row per seed prediction with domain, dimension, kind, scored (bool) and
    discarded (bool).
    """
    if predictions.empty:
        return []
    rows = []
    for (domain, dimension), g in predictions.groupby(["domain", "dimension"], sort=True):
        scored = int(g["scored"].sum())
        discarded = int(g["discarded"].sum())
        rows.append(
            {
                "domain": domain,
                "dimension": dimension,
                "n_predictions": int(len(g)),
                "n_scored": scored,
                "n_discarded": discarded,
                "n_failed": int((~g["scored"]).sum()),
                "discard_rate": (discarded / scored) if scored else None,
            }
        )
    return rows


def pearson(x: Iterable[float], y: Iterable[float]) -> float | None:
    xa, ya = np.asarray(list(x), float), np.asarray(list(y), float)
    if len(xa) < 3 or np.std(xa) == 0 or np.std(ya) == 0:
        return None
    return _clean(np.corrcoef(xa, ya)[0, 1])


def reasoning_structure(
    truth: pd.DataFrame,
    finals: pd.DataFrame,
    *,
    scales: dict[str, tuple[int, int]],
    embed: Callable[[list[str]], np.ndarray],
    k: int | None = None,
    min_shared: int = 2,
) -> list[dict[str, Any]]:
    """Per configuration: points (reviewer pair, agreement, reason similarity) and Pearson r.

    truth: reviewer_id, reviewer, idea_id, dimension, score (scored ratings only).
    finals: as in the module doc; reasons at the largest k (or `k`) of each kind.
    Agreement of a pair = mean over shared dimensions (>= min_shared shared items) of their alpha.
    Similarity = mean cosine between the two reviewers' judges' reasons on the same shared items.
    """
    if truth.empty or finals.empty:
        return []
    names = truth.drop_duplicates("reviewer_id").set_index("reviewer_id")["reviewer"].to_dict()
    pivot = truth.pivot_table(index=["idea_id", "dimension"], columns="reviewer_id", values="score")
    reviewers = sorted(pivot.columns)
    pairs: dict[tuple[int, int], tuple[float, list[tuple[int, str]]]] = {}
    for i, a in enumerate(reviewers):
        for b in reviewers[i + 1 :]:
            both = pivot[[a, b]].dropna()
            if both.empty:
                continue
            alphas = []
            for dimension, dg in both.groupby(level="dimension"):
                if len(dg) < min_shared:
                    continue
                al = alpha(dg.to_numpy(float).T, values=_values(scales, str(dimension)))
                if al is not None:
                    alphas.append(al)
            if alphas:
                pairs[(a, b)] = (
                    float(np.mean(alphas)),
                    [(int(i_), str(d)) for i_, d in both.index],
                )
    if not pairs:
        return []
    out = []
    for kind, kg in finals.groupby("kind", sort=False):
        use_k = int(kg["k"].max()) if k is None else k
        kg = kg[(kg["k"] == use_k) & (kg["reason"].fillna("") != "")]
        reasons = {
            (int(r.reviewer_id), int(r.idea_id), str(r.dimension)): str(r.reason)
            for r in kg.itertuples()
        }
        texts = sorted(set(reasons.values()))
        if len(texts) < 2:
            continue
        vectors = embed(texts)
        row_of = {t: i for i, t in enumerate(texts)}
        points = []
        for (a, b), (agreement, items) in pairs.items():
            sims = []
            for idea_id, dimension in items:
                ra, rb = reasons.get((a, idea_id, dimension)), reasons.get((b, idea_id, dimension))
                if ra is None or rb is None:
                    continue
                sims.append(float(vectors[row_of[ra]] @ vectors[row_of[rb]]))
            if sims:
                points.append(
                    {
                        "reviewer_a": names.get(a, str(a)),
                        "reviewer_b": names.get(b, str(b)),
                        "agreement": agreement,
                        "similarity": float(np.mean(sims)),
                        "n_items": len(sims),
                    }
                )
        out.append(
            {
                "kind": kind,
                "k": use_k,
                "points": points,
                "pearson_r": pearson(
                    [p["agreement"] for p in points], [p["similarity"] for p in points]
                ),
            }
        )
    out.sort(key=lambda r: _kind_pos(r["kind"]))
    return out
