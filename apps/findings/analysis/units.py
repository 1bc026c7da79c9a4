"""Splitting rationales into finding units: a sentence, or a clause joined by a contrast.

A rationale such as "Clear product. The sensor drifts in humidity; calibration is manual, but
the vendor offers a service." states four points. Units are split at sentence ends and
semicolons, then at the contrast words that join two points ("but", "however", "although",
"whereas"). Fragments under MIN_WORDS words ("Good.", "Not B2B") are kept only when the whole
rationale is that short, so a one-word rationale still counts as one unit. Inputs are bounded:
at most MAX_CHARS characters of a rationale and MAX_UNITS units per rationale are read.
"""

from __future__ import annotations

import re

MAX_CHARS = 4000
MAX_UNITS = 20
MIN_WORDS = 3

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CONTRAST = re.compile(r",?\s+\b(?:but|however|although|whereas|while)\b\s+", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9]+")


def _clean(text: str) -> str:
    text = text.strip().strip(";,:-").strip()
    return text[:1].upper() + text[1:] if text else ""


def split_units(text: str) -> list[str]:
    """The finding units of one rationale, in order, without empty or trivial fragments."""
    text = (text or "")[:MAX_CHARS].strip()
    if not text:
        return []
    pieces: list[str] = []
    for sentence in _SENTENCE.split(text):
        pieces += [_clean(p) for p in _CONTRAST.split(sentence)]
    pieces = [p for p in pieces if p]
    long_enough = [p for p in pieces if len(_WORD.findall(p)) >= MIN_WORDS]
    units = long_enough or pieces[:1]
    return units[:MAX_UNITS]
