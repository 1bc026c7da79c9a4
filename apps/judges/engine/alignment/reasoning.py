"""Reasoning structure: per reviewer pair, agreement against the similarity of their judges'
reasons on shared items; point sampling for the chart."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from apps.judges.engine.alignment.figures import _clean, _kind_pos, _values, alpha


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
        # Only kept predictions carry a reason worth comparing: a configuration whose predictions
        # were all discarded gets no scatter at all (the page says why).
        kg = kg[(kg["k"] == use_k) & kg["pred"].notna() & (kg["reason"].fillna("") != "")]
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


def sample_points(points: list[dict[str, Any]], *, limit: int) -> list[dict[str, Any]]:
    """At most `limit` points, evenly spaced along agreement: a readable scatter of the same
    shape (the statistics stay computed over every point)."""
    if len(points) <= limit:
        return points
    ordered = sorted(points, key=lambda p: (p["agreement"], p["reviewer_a"], p["reviewer_b"]))
    picks = np.linspace(0, len(ordered) - 1, limit).round().astype(int)
    return [ordered[i] for i in dict.fromkeys(int(i) for i in picks)]
