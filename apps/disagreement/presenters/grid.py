"""The Overview: the agreement grid, its chart and CSV, and the category-level report."""

from __future__ import annotations

from typing import Any

from apps.disagreement.presenters.common import (
    ALL,
    csv_key,
    dimensions_in,
    domains_in,
    filter_rows,
    label_domain,
    tone_alpha,
    tone_jaccard,
)


def grid(
    result: dict[str, Any],
    *,
    labels: dict[str, str],
    domain_names: dict[str, str],
    domain: str | None,
    dimension: str | None,
    background: str,
) -> dict[str, Any]:
    """The Table-3-like grid: one row per dimension, one column group per domain."""
    domains = domains_in(result)
    if domain:
        domains = [d for d in domains if d in (domain, ALL)]
    dims = dimensions_in(result, labels)
    if dimension:
        dims = [d for d in dims if d == dimension]
    cells = {
        (c["domain"], c["dimension"]): c
        for c in result.get("cells", [])
        if c.get("background", ALL) == background
    }
    rows = []
    for dim in dims:
        row_cells: list[dict[str, Any] | None] = []
        for dom in domains:
            c = cells.get((dom, dim))
            if c is None:
                row_cells.append(None)
                continue
            fine, coarse = c.get("fine", {}), c.get("coarse", {})
            row_cells.append(
                {
                    "alpha": fine.get("alpha"),
                    "ci_low": fine.get("ci_low"),
                    "ci_high": fine.get("ci_high"),
                    "n_items": fine.get("n_items", 0),
                    "jaccard": coarse.get("jaccard"),
                    "n_pairs": coarse.get("n_pairs", 0),
                    "alpha_tone": tone_alpha(fine.get("alpha")),
                    "jaccard_tone": tone_jaccard(coarse.get("jaccard")),
                    "reading": c.get("reading", ""),
                }
            )
        rows.append({"key": dim, "name": labels.get(dim, dim), "cells": row_cells})
    return {
        "domains": [{"key": d, "name": label_domain(d, domain_names)} for d in domains],
        "rows": rows,
    }


def grid_chart(
    result: dict[str, Any],
    *,
    labels: dict[str, str],
    domain: str,
    background: str,
    dimension: str | None = None,
) -> dict[str, Any]:
    """Bars of fine alpha next to coarse Jaccard per dimension, for one domain (and the
    dimension filter, when one is set)."""
    dims = [d for d in dimensions_in(result, labels) if not dimension or d == dimension]
    cells = {
        c["dimension"]: c
        for c in result.get("cells", [])
        if c["domain"] == domain and c.get("background", ALL) == background
    }
    alpha = [cells.get(d, {}).get("fine", {}).get("alpha") for d in dims]
    jaccard = [cells.get(d, {}).get("coarse", {}).get("jaccard") for d in dims]
    return {
        "labels": [labels.get(d, d) for d in dims],
        "alpha": alpha,
        "jaccard": jaccard,
        # No figure at all (no ratings yet, or too few pairs): the page says so, no empty axes.
        "has_data": any(v is not None for v in [*alpha, *jaccard]),
    }


def grid_csv(result: dict[str, Any], **filters: str | None) -> tuple[list[str], list[list[Any]]]:
    header = [
        "domain",
        "dimension",
        "background",
        "fine_alpha",
        "ci_low",
        "ci_high",
        "n_items",
        "n_scores",
        "coarse_jaccard",
        "n_pairs",
        "n_pairs_empty_union",
        "reading",
    ]
    rows = []
    for c in filter_rows(result.get("cells", []), **filters):
        f, k = c.get("fine", {}), c.get("coarse", {})
        rows.append(
            [
                csv_key(c["domain"]),
                c["dimension"],
                csv_key(c.get("background", ALL)),
                f.get("alpha"),
                f.get("ci_low"),
                f.get("ci_high"),
                f.get("n_items"),
                f.get("n_scores"),
                k.get("jaccard"),
                k.get("n_pairs"),
                k.get("n_pairs_empty_union"),
                c.get("reading", ""),
            ]
        )
    return header, rows


def category_rows(
    result: dict[str, Any], *, labels: dict[str, str], domain: str, dimension: str | None
) -> list[dict[str, Any]]:
    """The category report of one scope, named for the page."""
    return [
        {**s, "name": labels.get(s["dimension"], s["dimension"])}
        for s in result.get("categories", {}).get("scopes", [])
        if s["domain"] == domain and (not dimension or s["dimension"] == dimension)
    ]
