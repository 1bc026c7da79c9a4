"""Shape a snapshot's metrics into table rows, chart data and CSV rows for the dashboards.

Pure functions over the contract's dicts (no queries), shared by the pages, the CSV exports and
the API, so the numbers on a chart and in its CSV are the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ALL = "__all__"
BACKGROUNDS = ("technical", "business")


def label_domain(key: str, names: dict[str, str]) -> str:
    return "All domains" if key == ALL else names.get(key, key)


def label_background(key: str) -> str:
    return {
        "__all__": "All reviewers",
        "technical": "Technical",
        "business": "Business",
        "": "Unknown",
    }.get(key, key)


def fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def tone_alpha(value: float | None) -> str:
    """Krippendorff's usual thresholds: 0.8 reliable, 0.667 tentative, below that not."""
    if value is None:
        return "muted"
    if value >= 0.667:
        return "ok"
    if value >= 0.2:
        return "warn"
    return "err"


def tone_jaccard(value: float | None) -> str:
    if value is None:
        return "muted"
    if value >= 0.6:
        return "ok"
    if value >= 0.4:
        return "warn"
    return "err"


def filter_rows(
    rows: Iterable[dict[str, Any]],
    *,
    domain: str | None = None,
    dimension: str | None = None,
    background: str | None = None,
) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        if domain and row.get("domain") != domain:
            continue
        if dimension and row.get("dimension") != dimension:
            continue
        if background and "background" in row and row["background"] != background:
            continue
        out.append(row)
    return out


def domains_in(result: dict[str, Any]) -> list[str]:
    """Domain keys present in the cells, "__all__" last."""
    keys = sorted({c["domain"] for c in result.get("cells", []) if c["domain"] != ALL})
    return keys + [ALL]


def dimensions_in(result: dict[str, Any], labels: dict[str, str]) -> list[str]:
    present = {c["dimension"] for c in result.get("cells", [])}
    ordered = [k for k in labels if k in present]
    return ordered + sorted(present - set(ordered))


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
        row_cells = []
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
    result: dict[str, Any], *, labels: dict[str, str], domain: str, background: str
) -> dict[str, Any]:
    """Bars of fine alpha next to coarse Jaccard per dimension, for one domain."""
    dims = dimensions_in(result, labels)
    cells = {
        c["dimension"]: c
        for c in result.get("cells", [])
        if c["domain"] == domain and c.get("background", ALL) == background
    }
    return {
        "labels": [labels.get(d, d) for d in dims],
        "alpha": [cells.get(d, {}).get("fine", {}).get("alpha") for d in dims],
        "jaccard": [cells.get(d, {}).get("coarse", {}).get("jaccard") for d in dims],
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
                c["domain"],
                c["dimension"],
                c.get("background", ALL),
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


def strictness_chart(
    rows: list[dict[str, Any]],
    *,
    dims: list[str],
    labels: dict[str, str],
    scales: dict[str, tuple[int, int]],
    normalise: bool,
) -> dict[str, Any]:
    """Per-reviewer means as a strip per dimension; x = dimension index + a stable jitter."""
    index = {d: i for i, d in enumerate(dims)}
    points: dict[str, list[dict[str, Any]]] = {"technical": [], "business": [], "other": []}
    for row in rows:
        if row["dimension"] not in index or row.get("mean") is None:
            continue
        lo, hi = scales.get(row["dimension"], (0, 1))
        y = (row["mean"] - lo) / (hi - lo) if normalise and hi > lo else row["mean"]
        # Deterministic jitter from the reviewer id keeps a reviewer at the same x on every load.
        jitter = ((row["reviewer_id"] * 7919) % 61) / 61 * 0.5 - 0.25
        group = row.get("background") if row.get("background") in BACKGROUNDS else "other"
        points[group].append(
            {
                "x": round(index[row["dimension"]] + jitter, 3),
                "y": round(y, 3),
                "reviewer": row["reviewer"],
                "n": row.get("n", 0),
            }
        )
    return {
        "labels": [labels.get(d, d) for d in dims],
        "technical": points["technical"],
        "business": points["business"],
        "other": points["other"],
        "normalised": normalise,
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
            r["domain"],
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
    rows: list[dict[str, Any]], *, metric: str, backgrounds: dict[str, str], limit: int = 40
) -> dict[str, Any]:
    """Reviewer x reviewer matrix of pairwise alpha (or Jaccard) for one domain and dimension.

    Reviewers are ordered technical first, then business, then by name, so blocks of agreement
    between backgrounds show up as squares. Beyond `limit` reviewers the matrix keeps those with
    the most co-rated items (a 200 x 200 grid is unreadable) and says so.
    """
    weight: dict[str, int] = {}
    for r in rows:
        for who in (r["reviewer_a"], r["reviewer_b"]):
            weight[who] = weight.get(who, 0) + r.get("n_items", 0)
    names = sorted(weight, key=lambda n: -weight[n])
    truncated = len(names) > limit
    keep = set(names[:limit])
    order = {"technical": 0, "business": 1}
    reviewers = sorted(keep, key=lambda n: (order.get(backgrounds.get(n, ""), 2), n))
    pos = {n: i for i, n in enumerate(reviewers)}
    cells = []
    for r in rows:
        a, b = r["reviewer_a"], r["reviewer_b"]
        if a not in pos or b not in pos:
            continue
        value = r.get(metric)
        for x, y in ((pos[a], pos[b]), (pos[b], pos[a])):
            cells.append({"x": x, "y": y, "v": value, "n": r.get("n_items", 0)})
    return {
        "reviewers": reviewers,
        "backgrounds": [backgrounds.get(n, "") for n in reviewers],
        "cells": cells,
        "metric": metric,
        "truncated": truncated,
        "total": len(names),
    }


def pairwise_csv(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    header = ["domain", "dimension", "reviewer_a", "reviewer_b", "alpha", "n_items", "jaccard"]
    return header, [
        [
            r["domain"],
            r["dimension"],
            r["reviewer_a"],
            r["reviewer_b"],
            r.get("alpha"),
            r.get("n_items"),
            r.get("jaccard"),
        ]
        for r in rows
    ]


def panel_chart(result: dict[str, Any], *, labels: dict[str, str], domain: str) -> dict[str, Any]:
    dims = dimensions_in(result, labels)
    panel = {p["dimension"]: p for p in result.get("panel", []) if p["domain"] == domain}
    series = []
    for d in dims:
        p = panel.get(d)
        if p is None or not p.get("curve"):
            continue
        series.append(
            {
                "label": labels.get(d, d),
                "points": [{"x": c["k"], "y": c["reliability"]} for c in p["curve"]],
            }
        )
    return {"series": series}


def panel_rows(
    result: dict[str, Any], *, labels: dict[str, str], domain: str
) -> list[dict[str, Any]]:
    dims = dimensions_in(result, labels)
    panel = {p["dimension"]: p for p in result.get("panel", []) if p["domain"] == domain}
    return [
        {
            "key": d,
            "name": labels.get(d, d),
            "single": panel[d].get("single_reliability"),
            "k75": panel[d].get("k_for_075"),
            "k90": panel[d].get("k_for_090"),
        }
        for d in dims
        if d in panel
    ]


def panel_csv(result: dict[str, Any], **filters: str | None) -> tuple[list[str], list[list[Any]]]:
    header = [
        "domain",
        "dimension",
        "single_reliability",
        "k_for_075",
        "k_for_090",
        "k",
        "reliability",
    ]
    out = []
    for p in filter_rows(result.get("panel", []), **filters):
        for c in p.get("curve", []) or [{"k": None, "reliability": None}]:
            out.append(
                [
                    p["domain"],
                    p["dimension"],
                    p.get("single_reliability"),
                    p.get("k_for_075"),
                    p.get("k_for_090"),
                    c["k"],
                    c["reliability"],
                ]
            )
    return header, out


def contested_csv(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    header = [
        "idea_id",
        "idea",
        "domain",
        "dimension",
        "n_scores",
        "raw_spread",
        "raw_sd",
        "z_spread",
    ]
    return header, [
        [
            r["idea_id"],
            r["idea"],
            r["domain"],
            r["dimension"],
            r["n_scores"],
            r.get("raw_spread"),
            r.get("raw_sd"),
            r.get("z_spread"),
        ]
        for r in rows
    ]


def split_rows(
    result: dict[str, Any], *, labels: dict[str, str], domain: str
) -> list[dict[str, Any]]:
    """Per dimension: fine alpha and coarse Jaccard within technical, within business, and all."""
    dims = dimensions_in(result, labels)
    cells = {
        (c["dimension"], c.get("background", ALL)): c
        for c in result.get("cells", [])
        if c["domain"] == domain
    }
    out = []
    for d in dims:
        row: dict[str, Any] = {"key": d, "name": labels.get(d, d)}
        for bg in ("technical", "business", ALL):
            c = cells.get((d, bg), {})
            row[bg] = {
                "alpha": c.get("fine", {}).get("alpha"),
                "jaccard": c.get("coarse", {}).get("jaccard"),
                "n_pairs": c.get("coarse", {}).get("n_pairs", 0),
                "alpha_tone": tone_alpha(c.get("fine", {}).get("alpha")),
                "jaccard_tone": tone_jaccard(c.get("coarse", {}).get("jaccard")),
            }
        row["all"] = row[ALL]
        out.append(row)
    return out


def split_chart(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "labels": [r["name"] for r in rows],
        "technical_alpha": [r["technical"]["alpha"] for r in rows],
        "business_alpha": [r["business"]["alpha"] for r in rows],
        "all_alpha": [r[ALL]["alpha"] for r in rows],
        "technical_jaccard": [r["technical"]["jaccard"] for r in rows],
        "business_jaccard": [r["business"]["jaccard"] for r in rows],
        "all_jaccard": [r[ALL]["jaccard"] for r in rows],
    }


def metrics_payload(
    summary: dict[str, Any],
    strictness: list[dict[str, Any]],
    pairwise: list[dict[str, Any]],
    *,
    domain: str | None,
    dimension: str | None,
    background: str | None,
) -> dict[str, Any]:
    """Reassemble the contract's dict (docs/metrics.md), restricted to the filters given."""
    payload = {k: v for k, v in summary.items() if not isinstance(v, list)}
    for key in ("cells", "strictness_spread", "contested", "panel"):
        payload[key] = filter_rows(
            summary.get(key, []),
            domain=domain,
            dimension=dimension,
            background=background if key == "cells" else None,
        )
    payload["strictness"] = filter_rows(strictness, background=background)
    payload["pairwise"] = pairwise
    return payload
