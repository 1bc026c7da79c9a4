"""Shape a snapshot's metrics into table rows, chart data and CSV rows for the dashboards.

Pure functions over the contract's dicts (no queries), shared by the pages, the CSV exports and
the API, so the numbers on a chart and in its CSV are the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ALL = "__all__"
# PBIG's two groups, used when a snapshot predates free background labels.
DEMO_BACKGROUNDS = ("technical", "business")
# Colours of background groups (charts and labels): PBIG's two groups keep the colours they
# have always had; any other label takes the next free colour in list order.
DEMO_COLORS = {"technical": "#2f5fd0", "business": "#d97706"}
GROUP_PALETTE = ("#16a34a", "#9333ea", "#0891b2", "#be185d", "#4b5563", "#2f5fd0", "#d97706")
# Rows of the decision board shown per page (the CSV has every row).
BOARD_PAGE = 100
BOARD_SORTS = {
    "calibrated": "calibrated mean (z), highest first",
    "agreement": "agreement: calibrated spread, smallest first",
    "predicted": "predicted score, highest first",
}
# Reviewer pairs listed as most and least agreeing.
PAIRS_LISTED = 10


def label_domain(key: str, names: dict[str, str]) -> str:
    return "All domains" if key == ALL else names.get(key, key)


def label_background(key: str) -> str:
    if key == ALL:
        return "All reviewers"
    if not key:
        return "No background"
    return key[:1].upper() + key[1:]


def csv_key(key: Any) -> Any:
    """CSV cells say "all" where the document says "__all__"."""
    return "all" if key == ALL else key


def groups_in(result: dict[str, Any]) -> list[str]:
    """Background groups of a snapshot: every label found, or PBIG's two for old snapshots."""
    if "backgrounds" in result:
        return list(result["backgrounds"])
    present = {c.get("background") for c in result.get("cells", [])} - {ALL, None}
    return [b for b in DEMO_BACKGROUNDS if b in present] + sorted(present - set(DEMO_BACKGROUNDS))


def group_colors(groups: list[str]) -> dict[str, str]:
    others = [g for g in groups if g not in DEMO_COLORS]
    colors = {g: GROUP_PALETTE[i % len(GROUP_PALETTE)] for i, g in enumerate(others)}
    return {g: DEMO_COLORS.get(g) or colors[g] for g in groups}


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


# Single-reviewer reliabilities closer than this draw the same curve at chart scale.
PANEL_SAME_CURVE = 0.01
# Dash patterns for the panel-size curves, so curves that coincide stay visible.
PANEL_DASHES: tuple[list[int], ...] = ([], [8, 4], [2, 3], [12, 3, 2, 3], [4, 4], [1, 5])


def panel_chart(
    result: dict[str, Any], *, labels: dict[str, str], domain: str, dimension: str | None = None
) -> dict[str, Any]:
    """Spearman-Brown curves per dimension; curves that coincide are named in ``overlaps`` and
    in their legend label, and drawn as rings around the curve they lie on."""
    dims = [d for d in dimensions_in(result, labels) if not dimension or d == dimension]
    panel = {p["dimension"]: p for p in result.get("panel", []) if p["domain"] == domain}
    series: list[dict[str, Any]] = []
    drawn: list[tuple[float, str]] = []
    overlaps: list[str] = []
    for d in dims:
        p = panel.get(d)
        if p is None or not p.get("curve"):
            continue
        label = labels.get(d, d)
        rel = p["single_reliability"]
        # Curves closer than this at k = 1 (and so everywhere: Spearman-Brown narrows the gap)
        # are indistinguishable at chart scale.
        same_as = next((name for r, name in drawn if abs(r - rel) < PANEL_SAME_CURVE), None)
        if same_as is None:
            drawn.append((rel, label))
        else:
            overlaps.append(f"{label} lies on {same_as}")
        i = len(series)
        series.append(
            {
                "label": label if same_as is None else f"{label} (on {same_as})",
                "dash": PANEL_DASHES[i % len(PANEL_DASHES)],
                "overlap": same_as is not None,
                "points": [{"x": c["k"], "y": c["reliability"]} for c in p["curve"]],
            }
        )
    return {"series": series, "overlaps": overlaps}


def panel_rows(
    result: dict[str, Any], *, labels: dict[str, str], domain: str
) -> list[dict[str, Any]]:
    """Per dimension: ICC(1), the panels it needs, and the Overview's fine alpha next to it."""
    dims = dimensions_in(result, labels)
    panel = {p["dimension"]: p for p in result.get("panel", []) if p["domain"] == domain}
    alphas = {
        c["dimension"]: c.get("fine", {}).get("alpha")
        for c in result.get("cells", [])
        if c["domain"] == domain and c.get("background", ALL) == ALL
    }
    return [
        {
            "key": d,
            "name": labels.get(d, d),
            "single": panel[d].get("single_reliability"),
            "alpha": alphas.get(d),
            "n_items": panel[d].get("n_items"),
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
        "single_reliability_icc1",
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
                    csv_key(p["domain"]),
                    p["dimension"],
                    p.get("single_reliability"),
                    p.get("k_for_075"),
                    p.get("k_for_090"),
                    c["k"],
                    c["reliability"],
                ]
            )
    return header, out


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
    return {
        "labels": [r["name"] for r in rows],
        "datasets": [
            {
                "label": "Everyone" if g == ALL else label_background(g),
                "color": colors[g],
                "alpha": [r["groups"][i]["alpha"] for r in rows],
                "jaccard": [r["groups"][i]["jaccard"] for r in rows],
            }
            for i, g in enumerate(keys)
        ],
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


def category_rows(
    result: dict[str, Any], *, labels: dict[str, str], domain: str, dimension: str | None
) -> list[dict[str, Any]]:
    """The category report of one scope, named for the page."""
    return [
        {**s, "name": labels.get(s["dimension"], s["dimension"])}
        for s in result.get("categories", {}).get("scopes", [])
        if s["domain"] == domain and (not dimension or s["dimension"] == dimension)
    ]


def board_rows(
    rows: list[dict[str, Any]], *, sort: str, query: str = "", predicted_key: str = "pred_mean"
) -> list[dict[str, Any]]:
    """Board rows matching ``query`` (title or id, any case), in the chosen order.

    calibrated: z_mean highest first; agreement: z_spread smallest first (ties: higher z_mean);
    predicted: ``predicted_key`` highest first (ties: higher confidence, then higher z_mean).
    Rows without the figure go last, by title (predicted: by z_mean).
    """
    q = query.strip().lower()
    if q:
        rows = [r for r in rows if q in r["title"].lower() or q in r["idea"].lower()]

    def key(r: dict[str, Any]) -> tuple:
        z = r.get("z_mean")
        if sort == "agreement":
            v = r.get("z_spread")
            return (v is None, v if v is not None else 0, -(z or 0), r["title"])
        if sort == "predicted":
            v = r.get(predicted_key)
            c = r.get("pred_confidence") or 0
            return (v is None, -(v if v is not None else 0), -c, z is None, -(z or 0), r["title"])
        return (z is None, -(z if z is not None else 0), r["title"])

    return sorted(rows, key=key)


def _signed(v: float | None) -> str:
    return "" if v is None else f"{v:+.2f}"


def board_display(
    rows: list[dict[str, Any]], *, overall: bool, category_levels: dict[str, list[int]]
) -> list[dict[str, Any]]:
    """Board rows with the per-reviewer lists as short texts for the page."""
    out = []
    for r in rows:
        cats = set(category_levels.get(r["dimension"], []))
        scores = []
        for name, raw, z in r.get("scores", []):
            if overall:
                scores.append({"who": name, "text": _signed(z), "category": False})
            elif z is None and raw is not None and int(raw) in cats:
                scores.append({"who": name, "text": f"{int(raw)} (category)", "category": True})
            else:
                raw_text = "" if raw is None else str(int(raw))
                scores.append(
                    {"who": name, "text": f"{raw_text} ({_signed(z)})", "category": False}
                )
        preds = []
        for name, raw, conf, z in r.get("preds", []):
            conf_text = "" if conf is None else f" @{int(conf)}%"
            if overall:
                preds.append({"who": name, "text": f"{_signed(z)}{conf_text}", "category": False})
            elif z is None and raw is not None and int(raw) in cats:
                preds.append(
                    {"who": name, "text": f"{int(raw)} (category){conf_text}", "category": True}
                )
            else:
                raw_text = "" if raw is None else str(int(raw))
                z_text = f" ({_signed(z)})" if z is not None else ""
                preds.append(
                    {"who": name, "text": f"{raw_text}{z_text}{conf_text}", "category": False}
                )
        out.append({**r, "score_items": scores, "pred_items": preds})
    return out


def board_csv(rows: list[dict[str, Any]], *, sort: str) -> tuple[list[str], list[list[Any]]]:
    header = [
        "rank",
        "idea",
        "title",
        "domain",
        "dimension",
        "n_scores",
        "raw_mean",
        "calibrated_mean_z",
        "calibrated_spread_z",
        "category_answers",
        "scores",
        "n_predicted",
        "predicted_mean",
        "predicted_calibrated_mean_z",
        "predicted_confidence",
        "predictions",
        "ordered_by",
    ]

    def scores(items: list[list[Any]]) -> str:
        return "; ".join(
            f"{s[0]}={'' if s[1] is None else int(s[1])}"
            f"{'' if s[2] is None else f' (z {s[2]:+.2f})'}"
            for s in items
        )

    def preds(items: list[list[Any]]) -> str:
        return "; ".join(
            f"{p[0]}={'' if p[1] is None else int(p[1])}"
            f"{'' if p[3] is None else f' (z {p[3]:+.2f})'}"
            f"{'' if p[2] is None else f' @{int(p[2])}%'}"
            for p in items
        )

    return header, [
        [
            i,
            r["idea"],
            r["title"],
            r["domain"],
            csv_key(r["dimension"]),
            r["n_scores"],
            r.get("raw_mean"),
            r.get("z_mean"),
            r.get("z_spread"),
            r.get("n_category", 0),
            scores(r.get("scores", [])),
            r.get("n_pred", 0),
            r.get("pred_mean"),
            r.get("pred_z_mean"),
            r.get("pred_confidence"),
            preds(r.get("preds", [])),
            BOARD_SORTS[sort],
        ]
        for i, r in enumerate(rows, start=1)
    ]


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
    payload["backgrounds"] = summary.get("backgrounds", [])
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
