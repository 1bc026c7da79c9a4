"""The metrics document the API and the `metrics` command serve."""

from __future__ import annotations

from typing import Any

from apps.disagreement.presenters.common import filter_rows


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
