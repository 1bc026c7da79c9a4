"""Small text helpers shared by the panel prompts and parsers."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)
_SPACE = re.compile(r"\s+")


def squash(text: str) -> str:
    """Lower-case, whitespace collapsed, straight quotes: how quotes are matched to documents."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"')
    return _SPACE.sub(" ", text).strip().lower()


def clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def find_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a reply (fenced or bare), or None."""
    text = text or ""
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    first, last = text.find("{"), text.rfind("}")
    if 0 <= first < last:
        candidates.append(text[first : last + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate.strip())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None
