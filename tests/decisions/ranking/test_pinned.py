"""The decision recompute's outputs on a fixed case are those the code gave before its speed
work (tests/decisions/ranking/pinned.py says what the case holds and how to regenerate)."""

from __future__ import annotations

import json
import math
from typing import Any

from tests.decisions.ranking.pinned import PINNED, outputs

TOLERANCE = 1e-9


def differences(got: Any, want: Any, where: str = "") -> list[str]:
    """Where two JSON-like values differ: floats beyond TOLERANCE, anything else at all."""
    if isinstance(want, float) or isinstance(got, float):
        ok = (
            isinstance(got, int | float)
            and isinstance(want, int | float)
            and (got == want or math.isclose(got, want, rel_tol=TOLERANCE, abs_tol=TOLERANCE))
        )
        return [] if ok else [f"{where}: {got!r} != {want!r}"]
    if isinstance(want, dict) and isinstance(got, dict):
        if set(got) != set(want):
            return [f"{where}: keys {sorted(set(got) ^ set(want))} differ"]
        return [d for k in want for d in differences(got[k], want[k], f"{where}.{k}")]
    if isinstance(want, list) and isinstance(got, list | tuple):
        if len(got) != len(want):
            return [f"{where}: {len(got)} items != {len(want)}"]
        return [
            d
            for j, (g, w) in enumerate(zip(got, want, strict=True))
            for d in differences(g, w, f"{where}[{j}]")
        ]
    return [] if got == want else [f"{where}: {got!r} != {want!r}"]


def test_the_board_the_fits_p_top_and_the_routing_round_are_those_pinned():
    want = json.loads(PINNED.read_text())
    # Through JSON, as the snapshot stores them (tuples become lists, keys strings).
    got = json.loads(json.dumps(outputs()))
    found = differences(got, want)
    assert not found, f"{len(found)} differences, first: {found[:5]}"


def test_the_comparison_sees_a_change_beyond_the_tolerance():
    want = {"a": [1.0, {"b": 0.5, "c": "x"}]}
    assert not differences({"a": [1.0 + 1e-12, {"b": 0.5, "c": "x"}]}, want)
    assert differences({"a": [1.0 + 1e-6, {"b": 0.5, "c": "x"}]}, want)
    assert differences({"a": [1.0, {"b": 0.5, "c": "y"}]}, want)
    assert differences({"a": [1.0, {"b": 0.5}]}, want)
