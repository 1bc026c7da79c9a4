"""Idea-level pages: contested ideas and the split by background."""

from __future__ import annotations

from typing import Any

from apps.disagreement.presenters.common import (
    ALL,
    csv_key,
    dimensions_in,
    group_colors,
    label_background,
    tone_alpha,
    tone_jaccard,
)

CONTESTED_ORDER = "calibrated spread (z), highest first; ties by raw spread"


def contested_sorted(rows: list[dict[str, Any]], *, by_raw: bool = False) -> list[dict[str, Any]]:
    """The contested list in the stated order: calibrated spread (or raw spread) first, the
    other spread next, then idea id; identical scores never appear (analysis/contested.py)."""
    first, second = ("raw_spread", "z_spread") if by_raw else ("z_spread", "raw_spread")
    return sorted(rows, key=lambda r: (-(r.get(first) or 0), -(r.get(second) or 0), r["idea_id"]))


def contested_csv(
    rows: list[dict[str, Any]], *, by_raw: bool = False
) -> tuple[list[str], list[list[Any]]]:
    header = [
        "rank",
        "idea",
        "title",
        "domain",
        "dimension",
        "n_scores",
        "raw_spread",
        "raw_sd",
        "z_spread",
        "ordered_by",
    ]
    order = "raw_spread desc, z_spread desc" if by_raw else "z_spread desc, raw_spread desc"
    return header, [
        [
            i,
            r["idea"],
            r.get("title", r["idea"]),
            r["domain"],
            r["dimension"],
            r["n_scores"],
            r.get("raw_spread"),
            r.get("raw_sd"),
            r.get("z_spread"),
            order,
        ]
        for i, r in enumerate(contested_sorted(rows, by_raw=by_raw), start=1)
    ]


def split_rows(
    result: dict[str, Any], *, labels: dict[str, str], domain: str, groups: list[str]
) -> list[dict[str, Any]]:
    """Per dimension: fine alpha and coarse Jaccard within each background group, and all."""
    dims = dimensions_in(result, labels)
    cells = {
        (c["dimension"], c.get("background", ALL)): c
        for c in result.get("cells", [])
        if c["domain"] == domain
    }
    out = []
    for d in dims:
        row: dict[str, Any] = {"key": d, "name": labels.get(d, d), "groups": []}
        for bg in [*groups, ALL]:
            c = cells.get((d, bg), {})
            fine, coarse = c.get("fine", {}), c.get("coarse", {})
            row["groups"].append(
                {
                    "key": bg,
                    "label": "Everyone" if bg == ALL else label_background(bg),
                    "alpha": fine.get("alpha"),
                    "n_items": fine.get("n_items", 0),
                    "jaccard": coarse.get("jaccard"),
                    "n_pairs": coarse.get("n_pairs", 0),
                    "alpha_tone": tone_alpha(fine.get("alpha")),
                    "jaccard_tone": tone_jaccard(coarse.get("jaccard")),
                }
            )
        out.append(row)
    return out


def split_chart(rows: list[dict[str, Any]], *, groups: list[str]) -> dict[str, Any]:
    colors = {**group_colors(groups), ALL: "#1d2330"}
    keys = [*groups, ALL]
    datasets = [
        {
            "label": "Everyone" if g == ALL else label_background(g),
            "color": colors[g],
            "alpha": [r["groups"][i]["alpha"] for r in rows],
            "jaccard": [r["groups"][i]["jaccard"] for r in rows],
        }
        for i, g in enumerate(keys)
    ]
    return {
        "labels": [r["name"] for r in rows],
        "datasets": datasets,
        # Every bar undefined (no ratings, too few pairs): the page says why, no empty axes.
        "has_data": any(v is not None for d in datasets for v in [*d["alpha"], *d["jaccard"]]),
    }


def split_csv(rows: list[dict[str, Any]], *, domain: str) -> tuple[list[str], list[list[Any]]]:
    """The by-background table as shown: one row per dimension and group (everyone last)."""
    header = [
        "domain",
        "dimension",
        "group",
        "fine_alpha",
        "n_items",
        "coarse_jaccard",
        "n_pairs",
    ]
    return header, [
        [
            csv_key(domain),
            r["key"],
            csv_key(g["key"]),
            g["alpha"],
            g["n_items"],
            g["jaccard"],
            g["n_pairs"],
        ]
        for r in rows
        for g in r["groups"]
    ]
