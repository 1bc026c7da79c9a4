"""Panel size: reliability as the panel grows (ICC(1)), chart, rows and CSV."""

from __future__ import annotations

from typing import Any

from apps.disagreement.presenters.common import ALL, csv_key, dimensions_in, filter_rows

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
    # No curve at all: the page says why instead of drawing empty axes.
    return {"series": series, "overlaps": overlaps, "has_data": bool(series)}


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
