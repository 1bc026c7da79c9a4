from __future__ import annotations

from typing import Any

from django import template

register = template.Library()

KIND_LABELS = {"zero_shot": "Zero-shot", "aggregate": "Aggregate", "personalized": "Personalized"}


@register.filter
def pct(value: float | None, digits: int = 1) -> str:
    """0.0123 -> "1.2%"; None -> "–"."""
    if value is None:
        return "–"
    return f"{100 * float(value):.{int(digits)}f}%"


@register.filter
def num(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "n/a"
    return f"{float(value):.{int(digits)}f}"


@register.filter
def kind_label(kind: str) -> str:
    return KIND_LABELS.get(kind, kind)


@register.filter
def get(mapping: dict, key: str) -> Any:
    return mapping.get(key) if mapping else None


@register.filter
def key_label(value: object) -> str:
    """market_size -> market size; lists are joined with commas."""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v).replace("_", " ") for v in value)
    return str(value).replace("_", " ")
