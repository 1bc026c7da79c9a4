"""Read a judge's reply: one JSON object {"score", "reason", "confidence"}, found however the
model wrapped it.

Tolerated: <think>...</think> blocks, code fences, prose around the object, single quotes,
trailing commas, Python literals (True/None), numeric strings ("3", "85%"), integral floats
(3.0), a confidence given as a fraction (0.85 -> 85, 1.0 -> 100), and as a last resort plain
"Score: 3 / Confidence: 80 / Reason: ..." lines. Refused (ReplyError, which triggers a
re-ask): no object, a missing score or confidence, a non-integer score (4.5), a score off the
scale, a confidence outside 0-100.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any


class ReplyError(ValueError):
    """The reply cannot be used; the message says why (it is shown to the model on re-ask)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ParsedReply:
    score: int
    reason: str
    confidence: int


_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?$")


def _balanced_objects(text: str) -> list[str]:
    """Every top-level {...} substring, respecting quoted strings (either quote style)."""
    found: list[str] = []
    depth = 0
    start = -1
    quote: str | None = None
    escaped = False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'" and depth > 0:
            # An apostrophe inside prose ("don't") outside an object is ignored (depth == 0).
            quote = ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                found.append(text[start : i + 1])
    return found


def _load_object(candidate: str) -> dict[str, Any] | None:
    attempts = [candidate, _TRAILING_COMMA.sub(r"\1", candidate)]
    for text in attempts:
        try:
            # strict=False: a raw line break inside the reason string (small models write one)
            value = json.loads(text, strict=False)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    # Single quotes, Python literals: evaluate as a Python literal (safe: literals only).
    py = re.sub(r"\btrue\b", "True", attempts[1])
    py = re.sub(r"\bfalse\b", "False", py)
    py = re.sub(r"\bnull\b", "None", py)
    try:
        value = ast.literal_eval(py)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def _find_object(text: str) -> dict[str, Any] | None:
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    candidates += _balanced_objects(text)
    # A reply cut short (no closing brace): try closing it, and first the string it was cut
    # in (max_tokens inside the reason).
    opening = text.find("{")
    if opening >= 0 and not _balanced_objects(text[opening:]):
        cut = text[opening:].rstrip().rstrip(",")
        candidates.append(cut + "}")
        candidates.append(cut.rstrip("\\") + '"}')
    loaded = []
    for candidate in candidates:
        obj = _load_object(candidate.strip())
        if obj is not None:
            obj = {str(k).strip().lower(): v for k, v in obj.items()}
            if "score" in obj:
                return obj
            loaded.append(obj)
    return loaded[0] if loaded else None


def _key_value_fallback(text: str) -> dict[str, Any] | None:
    score = re.search(r"\bscore\b\**\s*[:=]\s*\**\s*\"?([+-]?\d+(?:\.\d+)?)", text, re.I)
    if not score:
        return None
    obj: dict[str, Any] = {"score": score.group(1)}
    conf = re.search(r"\bconfidence\b\**\s*[:=]\s*\**\s*\"?(\d+(?:\.\d+)?)\s*%?", text, re.I)
    if conf:
        obj["confidence"] = conf.group(1)
    reason = re.search(r"\breason\b\**\s*[:=]\s*\**\s*(.+)", text, re.I)
    if reason:
        obj["reason"] = reason.group(1).strip().strip('"').strip()
    return obj


def _as_number(value: Any, field: str) -> float:
    if isinstance(value, bool) or value is None:
        raise ReplyError(f"{field} must be a number, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        cleaned = value.strip().rstrip("%").strip()
        if _NUMBER.match(cleaned):
            return float(cleaned)
    raise ReplyError(f"{field} must be a number, got {value!r}")


def _on_unit_scale(raw: Any, value: float) -> bool:
    """A confidence on the 0-1 scale: any value strictly between 0 and 1, and 1 written as a
    decimal (1.0, "1.0"), which models mean as certainty, not as 1 %. An integer 1 or "1%"
    stays a percentage."""
    if 0 < value < 1:
        return True
    if value != 1:
        return False
    if isinstance(raw, float):
        return True
    return isinstance(raw, str) and "." in raw and not raw.strip().endswith("%")


def parse_reply(text: str, *, scale_min: int, scale_max: int) -> ParsedReply:
    """Extract and validate {"score", "reason", "confidence"} from a model reply."""
    if text is None or not str(text).strip():
        raise ReplyError("the reply was empty")
    cleaned = _THINK.sub("", str(text)).strip()
    obj = _find_object(cleaned) or _key_value_fallback(cleaned)
    if obj is None:
        raise ReplyError("no JSON object was found in the reply")
    if "score" not in obj:
        raise ReplyError('the JSON object has no "score" field')
    if "confidence" not in obj:
        raise ReplyError('the JSON object has no "confidence" field')

    score_value = _as_number(obj["score"], "score")
    if not score_value.is_integer():
        raise ReplyError(f"score must be an integer level, got {obj['score']!r}")
    score = int(score_value)
    if not scale_min <= score <= scale_max:
        raise ReplyError(f"score {score} is off the scale {scale_min}-{scale_max}")

    confidence_value = _as_number(obj["confidence"], "confidence")
    if _on_unit_scale(obj["confidence"], confidence_value):
        confidence_value *= 100  # a fraction (0.85, 1.0) rather than a percentage
    if not 0 <= confidence_value <= 100:
        raise ReplyError(f"confidence {obj['confidence']!r} is outside 0-100")

    reason = obj.get("reason", "")
    reason = "" if reason is None else str(reason).strip()
    return ParsedReply(score=score, reason=reason, confidence=int(round(confidence_value)))
