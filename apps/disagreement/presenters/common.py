"""Labels, tones, filters and lookups every dashboard presenter shares."""

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
