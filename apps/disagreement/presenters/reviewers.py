"""Reviewer-level pages: strictness and the reviewer x reviewer agreement matrix."""

from __future__ import annotations

from typing import Any

from apps.disagreement.presenters.common import csv_key, group_colors, label_background

# Reviewer pairs listed as most and least agreeing.
PAIRS_LISTED = 10


def strictness_chart(
    rows: list[dict[str, Any]],
    *,
    dims: list[str],
    labels: dict[str, str],
    scales: dict[str, tuple[int, int]],
    normalise: bool,
    groups: list[str],
) -> dict[str, Any]:
    """Per-reviewer means as a strip per dimension; x = dimension index + a stable jitter.

    One dataset per background group (any label), plus reviewers without one."""
    index = {d: i for i, d in enumerate(dims)}
    points: dict[str, list[dict[str, Any]]] = {g: [] for g in [*groups, ""]}
    for row in rows:
        if row["dimension"] not in index or row.get("mean") is None:
            continue
        lo, hi = scales.get(row["dimension"], (0, 1))
        y = (row["mean"] - lo) / (hi - lo) if normalise and hi > lo else row["mean"]
        # Deterministic jitter from the reviewer id keeps a reviewer at the same x on every load.
        jitter = ((row["reviewer_id"] * 7919) % 61) / 61 * 0.5 - 0.25
        group: str = row["background"] if row.get("background") in points else ""
        points[group].append(
            {
                "x": round(index[row["dimension"]] + jitter, 3),
                "y": round(y, 3),
                "reviewer": row["reviewer"],
                "n": row.get("n", 0),
            }
        )
    colors = group_colors(groups)
    datasets = [
        {"label": f"{label_background(g)} reviewers", "color": colors[g], "points": points[g]}
        for g in groups
        if points[g]
    ]
    if points[""]:
        datasets.append({"label": "No background", "color": "#8a94a6", "points": points[""]})
    return {
        "labels": [labels.get(d, d) for d in dims],
        "datasets": datasets,
        "normalised": normalise,
        # No reviewer mean to place: the page says why instead of drawing empty axes.
        "has_data": bool(datasets),
    }


def strictness_csv(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    header = [
        "domain",
        "dimension",
        "reviewer",
        "reviewer_id",
        "background",
        "mean",
        "std",
        "n",
        "counts",
    ]
    out = [
        [
            csv_key(r["domain"]),
            r["dimension"],
            r["reviewer"],
            r["reviewer_id"],
            r.get("background", ""),
            r.get("mean"),
            r.get("std"),
            r.get("n"),
            ";".join(f"{k}:{v}" for k, v in sorted((r.get("counts") or {}).items())),
        ]
        for r in rows
    ]
    return header, out


def heatmap(
    rows: list[dict[str, Any]],
    *,
    metric: str,
    backgrounds: dict[str, str],
    groups: list[str],
    limit: int = 80,
) -> dict[str, Any]:
    """Reviewer x reviewer matrix of pairwise alpha (or Jaccard) for one domain and dimension.

    Every reviewer with a pair is shown up to ``limit`` (80 labels still read on a page-wide
    square); beyond it the matrix keeps those with the most co-rated items and says so.
    Reviewers are ordered by background group, then by name, so blocks of agreement between
    backgrounds show up as squares.
    """
    weight: dict[str, int] = {}
    for r in rows:
        for who in (r["reviewer_a"], r["reviewer_b"]):
            weight[who] = weight.get(who, 0) + r.get("n_items", 0)
    names = sorted(weight, key=lambda n: (-weight[n], n))
    truncated = len(names) > limit
    keep = set(names[:limit])
    order = {g: i for i, g in enumerate(groups)}
    reviewers = sorted(keep, key=lambda n: (order.get(backgrounds.get(n, ""), len(groups)), n))
    pos = {n: i for i, n in enumerate(reviewers)}
    cells = []
    for r in rows:
        a, b = r["reviewer_a"], r["reviewer_b"]
        if a not in pos or b not in pos:
            continue
        value = r.get(metric)
        for x, y in ((pos[a], pos[b]), (pos[b], pos[a])):
            cells.append({"x": x, "y": y, "v": value, "n": r.get("n_items", 0)})
    colors = group_colors(groups)
    return {
        "reviewers": reviewers,
        "backgrounds": [backgrounds.get(n, "") for n in reviewers],
        "colors": [colors.get(backgrounds.get(n, ""), "#8a94a6") for n in reviewers],
        "legend": [{"label": label_background(g), "color": colors[g]} for g in groups],
        "cells": cells,
        "metric": metric,
        "truncated": truncated,
        "total": len(names),
    }


def pair_extremes(
    rows: list[dict[str, Any]], *, metric: str, min_items: int, n: int = PAIRS_LISTED
) -> dict[str, Any]:
    """The most and the least agreeing reviewer pairs on ``metric``, among pairs with at least
    ``min_items`` shared ideas (fewer make a pair's figure mostly noise)."""
    ranked = [r for r in rows if r.get(metric) is not None and r.get("n_items", 0) >= min_items]
    ranked.sort(key=lambda r: (-r[metric], -r["n_items"], r["reviewer_a"], r["reviewer_b"]))
    most = ranked[:n]
    least = list(reversed(ranked[-n:])) if len(ranked) > n else list(reversed(ranked))
    shown = {id(r) for r in most}
    # With few pairs the two lists would repeat each other: the least list keeps the rest.
    if len(ranked) <= 2 * n:
        least = [r for r in reversed(ranked) if id(r) not in shown]
    return {
        "most": most,
        "least": least,
        "n_ranked": len(ranked),
        "n_too_few": sum(1 for r in rows if r.get("n_items", 0) < min_items),
        "min_items": min_items,
    }


def pairwise_csv(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    header = ["domain", "dimension", "reviewer_a", "reviewer_b", "alpha", "n_items", "jaccard"]
    return header, [
        [
            csv_key(r["domain"]),
            r["dimension"],
            r["reviewer_a"],
            r["reviewer_b"],
            r.get("alpha"),
            r.get("n_items"),
            r.get("jaccard"),
        ]
        for r in rows
    ]
