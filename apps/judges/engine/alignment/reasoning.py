"""Reasoning structure: per reviewer pair, agreement against the similarity of their judges'
reasons on shared items; point sampling for the chart."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from apps.judges.engine.alignment.figures import _clean, _kind_pos, _values, alpha


def pearson(x: Iterable[float], y: Iterable[float]) -> float | None:
    xa, ya = np.asarray(list(x), float), np.asarray(list(y), float)
    if len(xa) < 3 or np.std(xa) == 0 or np.std(ya) == 0:
        return None
    return _clean(np.corrcoef(xa, ya)[0, 1])


def _row_products(vectors: Any, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """vectors[left[i]] . vectors[right[i]] for every i; vectors dense (a block at a time: a
    gathered block of wide vectors is large) or a scipy sparse matrix."""
    if sparse.issparse(vectors):
        rows = sparse.csr_matrix(vectors)
        return np.asarray(rows[left].multiply(rows[right]).sum(axis=1), dtype=float).ravel()
    out = np.zeros(len(left), dtype=float)
    block = 512
    for start in range(0, len(left), block):
        a, b = left[start : start + block], right[start : start + block]
        out[start : start + block] = np.einsum("ij,ij->i", vectors[a], vectors[b])
    return out


def _agreeing_pairs(
    truth: pd.DataFrame, *, scales: dict[str, tuple[int, int]], min_shared: int
) -> dict[tuple[int, int], tuple[float, list[tuple[int, str]]]]:
    """(a, b) -> (mean alpha over shared dimensions, shared items) for every reviewer pair that
    scored an item in common. Pairs come from the items' readers, not from every pair of
    reviewers: at 1,000 reviewers in 100 domains, 4,500 pairs share items of 500,000 pairs, and
    a reviewers x items table would not fit in memory."""
    scores: dict[int, dict[tuple[int, str], float]] = {}
    readers: dict[tuple[int, str], list[int]] = {}
    for reviewer, idea, dimension, score in zip(
        truth["reviewer_id"], truth["idea_id"], truth["dimension"], truth["score"], strict=True
    ):
        if pd.isna(score):
            continue
        item = (int(idea), str(dimension))
        own = scores.setdefault(int(reviewer), {})
        if item not in own:  # one score per reviewer and item
            readers.setdefault(item, []).append(int(reviewer))
            own[item] = float(score)
    candidates: set[tuple[int, int]] = set()
    for group in readers.values():
        group.sort()
        for i, a in enumerate(group):
            candidates.update((a, b) for b in group[i + 1 :])
    pairs: dict[tuple[int, int], tuple[float, list[tuple[int, str]]]] = {}
    for a, b in sorted(candidates):
        shared = sorted(scores[a].keys() & scores[b].keys())
        by_dimension: dict[str, list[tuple[int, str]]] = {}
        for item in shared:
            by_dimension.setdefault(item[1], []).append(item)
        alphas = []
        for dimension in sorted(by_dimension):
            items = by_dimension[dimension]
            if len(items) < min_shared:
                continue
            data = np.array([[scores[a][i] for i in items], [scores[b][i] for i in items]])
            al = alpha(data, values=_values(scales, dimension))
            if al is not None:
                alphas.append(al)
        if alphas:
            pairs[(a, b)] = (float(np.mean(alphas)), shared)
    return pairs


def reasoned_rows(finals: pd.DataFrame, *, k: int | None = None) -> pd.Series:
    """Which finals' reasons the reasoning structure compares: each kind's at its largest k (or
    at `k`) that kept a prediction. Only kept predictions carry a reason worth comparing: a
    configuration whose predictions were all discarded gets no scatter at all (the page says
    why)."""
    largest = finals.groupby("kind")["k"].transform("max") if k is None else k
    return (finals["k"] == largest) & finals["pred"].notna()


def reasoning_structure(
    truth: pd.DataFrame,
    finals: pd.DataFrame,
    *,
    scales: dict[str, tuple[int, int]],
    embed: Callable[[list[str]], Any],
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
    pairs = _agreeing_pairs(truth, scales=scales, min_shared=min_shared)
    if not pairs:
        return []
    out = []
    finals = finals[reasoned_rows(finals, k=k) & (finals["reason"].fillna("") != "")]
    for kind, kg in finals.groupby("kind", sort=False):
        use_k = int(kg["k"].max())
        reasons = {
            (int(r.reviewer_id), int(r.idea_id), str(r.dimension)): str(r.reason)
            for r in kg.itertuples()
        }
        texts = sorted(set(reasons.values()))
        if len(texts) < 2:
            continue
        vectors = embed(texts)
        row_of = {t: i for i, t in enumerate(texts)}
        # Every pair's shared items at once: one row-wise product over the gathered vectors.
        # Machine integers (8 bytes each, not a Python int's 36): a million shared items at
        # 1,000 reviewers.
        owners, left, right = array("q"), array("q"), array("q")
        for n, (a, b) in enumerate(pairs):
            for idea_id, dimension in pairs[(a, b)][1]:
                ra, rb = reasons.get((a, idea_id, dimension)), reasons.get((b, idea_id, dimension))
                if ra is not None and rb is not None:
                    owners.append(n)
                    left.append(row_of[ra])
                    right.append(row_of[rb])
        sims = _row_products(
            vectors, np.frombuffer(left, dtype=np.int64), np.frombuffer(right, dtype=np.int64)
        )
        owner = np.frombuffer(owners, dtype=np.int64)
        count = np.bincount(owner, minlength=len(pairs))
        total = np.bincount(owner, weights=sims, minlength=len(pairs))
        points = [
            {
                "reviewer_a": names.get(a, str(a)),
                "reviewer_b": names.get(b, str(b)),
                "agreement": agreement,
                "similarity": float(total[n] / count[n]),
                "n_items": int(count[n]),
            }
            for n, ((a, b), (agreement, _)) in enumerate(pairs.items())
            if count[n]
        ]
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
