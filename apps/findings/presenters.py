"""Shapes the stored findings for pages, CSV and the command."""

from __future__ import annotations

from typing import Any

# The CSV columns of a scope row (one home, used by the CSV export and the API docs).
SCOPE_CSV_COLUMNS = [
    "scope",
    "n_rationales",
    "n_units",
    "n_findings",
    "n_reviewers",
    "chao2",
    "chao2_low",
    "chao2_high",
    "coverage",
    "expected_new_1",
    "expected_new_2",
    "expected_new_5",
    "k80",
]
FINDING_CSV_COLUMNS = ["idea_id", "finding_id", "name", "n_reviewers", "reviewers", "units"]


def scope_rows(
    section: dict[str, Any] | None, *, domain: str, only_idea: int | None = None
) -> list[dict[str, Any]]:
    """Domain, dimension and idea scopes of one domain's section, as flat dicts with `scope`."""
    if not section:
        return []
    rows: list[dict[str, Any]] = []
    if only_idea is None:
        rows.append({"scope": f"domain:{domain}", **section["scope"]})
        rows += [
            {"scope": f"dimension:{domain}/{dim}", **est}
            for dim, est in section["dimensions"].items()
        ]
    for idea_id, est in section.get("ideas", {}).items():
        if only_idea is None or int(idea_id) == only_idea:
            rows.append(
                {"scope": f"idea:{idea_id}", **{k: v for k, v in est.items() if k != "findings"}}
            )
    return rows


def scope_csv_row(row: dict[str, Any]) -> list[Any]:
    c = row["chao2"]
    new = row["expected_new"]
    return [
        row["scope"],
        row["n_rationales"],
        row["n_units"],
        row["n_findings"],
        row.get("n_reviewers"),
        c["estimate"],
        c["low"],
        c["high"],
        row["coverage"],
        new["1"],
        new["2"],
        new["5"],
        row.get("k80"),
    ]


def side_by_side(saturation: dict[str, Any], reliability: dict[str, Any] | None) -> dict[str, Any]:
    """The page's headline: 'k reviewers give a reliable score; k' surface 80 % of findings'."""
    return {
        "k_reliable": (reliability or {}).get("k"),
        "reliability_target": (reliability or {}).get("target"),
        "k_findings": saturation.get("k80"),
        "n_ideas": saturation.get("n_ideas", 0),
    }


def reliability_by_dimension(
    panel: list[dict[str, Any]], *, domain: str, labels: dict[str, str]
) -> list[dict[str, Any]]:
    """The disagreement snapshot's panel sizes (its result's "panel") for one domain (ICC(1),
    k for 0.75 and 0.90)."""
    rows = []
    for p in panel:
        if p.get("domain") != domain:
            continue
        rows.append(
            {
                "dimension": p["dimension"],
                "name": labels.get(p["dimension"], p["dimension"]),
                "single": p.get("single_reliability"),
                "k75": p.get("k_for_075"),
                "curve": [
                    {"k": c["k"], "reliability": c["reliability"]} for c in p.get("curve", [])
                ],
            }
        )
    return rows


def headline(saturation: dict[str, Any], reliability: list[dict[str, Any]]) -> dict[str, Any]:
    """'k reviewers give a reliable score; k' reviewers surface 80 % of the findings'.

    k is the median, over the domain's dimensions, of the panel that reaches 0.75 (good)
    reliability; dimensions that never reach it (no k within 20) count as more than 20.
    """
    ks = sorted((r["k75"] if r["k75"] is not None else 21) for r in reliability)
    k = ks[len(ks) // 2] if ks else None
    return {
        "k_reliable": k if k is None or k <= 20 else None,
        "k_reliable_unreached": k is not None and k > 20,
        "n_dimensions": len(ks),
        "k_findings": saturation.get("k80"),
        "n_ideas": saturation.get("n_ideas", 0),
    }


def svg_chart(
    reliability: list[dict[str, Any]], saturation: dict[str, Any], *, width: int = 560
) -> dict[str, Any]:
    """Both curves against panel size on one 0-1 axis, as SVG polyline points (server-drawn,
    no script): mean Spearman-Brown reliability over the dimensions, and the mean share of an
    idea's Chao2 total that k reviewers raise, with its interquartile band."""
    height, pad, kmax = 240, 32, 12

    def xy(k: float, y: float) -> str:
        x = pad + (k - 1) / (kmax - 1) * (width - 2 * pad)
        return f"{x:.1f},{height - pad - max(0.0, min(1.0, y)) * (height - 2 * pad):.1f}"

    by_k: dict[int, list[float]] = {}
    for r in reliability:
        for c in r["curve"]:
            if c["k"] <= kmax and c["reliability"] is not None:
                by_k.setdefault(int(c["k"]), []).append(float(c["reliability"]))
    rel = " ".join(xy(k, sum(v) / len(v)) for k, v in sorted(by_k.items()))
    curve = [p for p in saturation.get("curve", []) if p["reviewers"] <= kmax]
    disc = " ".join(xy(p["reviewers"], p["share"]) for p in curve)
    band = " ".join(
        [xy(p["reviewers"], p["q75"]) for p in curve]
        + [xy(p["reviewers"], p["q25"]) for p in reversed(curve)]
    )
    ticks = [{"x": float(xy(k, 0).split(",")[0]), "label": k} for k in range(1, kmax + 1)]
    return {
        "width": width,
        "height": height,
        "reliability": rel,
        "discovery": disc,
        "band": band,
        "ticks": ticks,
        "y80": float(xy(1, 0.8).split(",")[1]),
        "y75": float(xy(1, 0.75).split(",")[1]),
        "bottom": height - pad,
        "left": pad,
        "right": width - pad,
        "top": pad,
        # Neither curve has a point (no reliability yet, no idea with two reviewers' rationales):
        # the page says why instead of drawing empty axes.
        "has_data": bool(rel or disc),
    }
