"""Pure shaping of stored alignment results (dicts in, dicts out, no queries), shared by the
pages, the CSV exports and the API, so a chart, its table and its CSV show the same numbers."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from apps.judges.engine import level as levels
from apps.judges.engine.alignment import verdict_again
from apps.judges.models import JudgeConfig

KIND_LABELS = dict(JudgeConfig.Kind.choices)
KIND_COLOURS = {"zero_shot": "#8a94a6", "aggregate": "#d9822b", "personalized": "#2f6fde"}
PREDICTIONS_SHOWN = 500
# Reviewers in the dashboard's verdict table (the summary counts and the CSV cover everyone).
VERDICT_ROWS_SHOWN = 25


def _order(names: dict[str, str]) -> Any:
    keys = list(names)
    return lambda d: keys.index(d) if d in keys else len(keys)


def _kind_order(kind: str) -> int:
    return list(KIND_LABELS).index(kind) if kind in KIND_LABELS else len(KIND_LABELS)


def model_labels(result: dict[str, Any]) -> dict[str, str]:
    """kind -> "model (mode); ..." for every configuration of a snapshot."""
    return {
        kind: "; ".join(m["label"] for m in models)
        for kind, models in (result.get("models") or {}).items()
    }


def _why_missing(rows: list[dict[str, Any]]) -> str:
    """Why a configuration has no kept prediction at any k (said instead of an empty line)."""
    rates = [r["discard_rate"] for r in rows if r.get("discard_rate") is not None]
    if rates and max(rates) >= 0.999:
        return "every prediction was discarded for low confidence"
    if rates:
        return f"{max(rates):.0%} of predictions were discarded for low confidence, the rest failed"
    return "every call failed or returned no score"


def chart_series(
    curve: list[dict[str, Any]], names: dict[str, str], models: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Per dimension, one line per configuration that kept predictions: alpha against k
    (paper 001, Figure 2). A configuration with no kept prediction is listed with the reason,
    never drawn."""
    models = models or {}
    by_dim: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for row in curve:
        by_dim[row["dimension"]][row["kind"]].append(row)
    charts: list[dict[str, Any]] = []
    for dim in sorted(by_dim, key=_order(names)):
        datasets, missing = [], []
        for kind, rows in sorted(by_dim[dim].items(), key=lambda kv: _kind_order(kv[0])):
            label = KIND_LABELS.get(kind, kind)
            if not any(r["n"] for r in rows):
                missing.append({"label": label, "reason": _why_missing(rows)})
                continue
            datasets.append(
                {
                    "label": label,
                    "kind": kind,
                    "model": models.get(kind, ""),
                    "color": KIND_COLOURS.get(kind, "#555"),
                    # At its largest k, does it beat the level-only baseline? (engine.level)
                    "adds_nothing": bool(max(rows, key=lambda r: r["k"]).get("adds_nothing")),
                    # The per-reviewer alpha (engine.level): the figure the verdicts rest on,
                    # so the chart and the verdict table tell one story. Pooled alpha and the
                    # level-only baseline ride along for the tooltip and the table.
                    "points": [
                        {
                            "x": r["k"],
                            "y": r.get("within_alpha"),
                            "pooled": r["alpha"],
                            "baseline": r.get("baseline_alpha"),
                            "n": r["n"],
                            "coverage": r.get("coverage"),
                        }
                        for r in rows
                        if r["n"]
                    ],
                }
            )
        charts.append(
            {
                "dimension": dim,
                "name": names.get(dim, dim),
                "datasets": datasets,
                "missing": missing,
                "rows": sorted(
                    (r for rows in by_dim[dim].values() for r in rows),
                    key=lambda r: (_kind_order(r["kind"]), r["k"]),
                ),
            }
        )
    return charts


def coarse_rows(coarse: list[dict[str, Any]], names: dict[str, str]) -> list[dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for r in coarse:
        row = table.setdefault(
            r["dimension"],
            {"dimension": r["dimension"], "name": names.get(r["dimension"], r["dimension"])},
        )
        row[r["kind"]] = r
    return [table[d] for d in sorted(table, key=_order(names))]


def coarse_chart(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "has_data": any(
            (r.get(kind) or {}).get("jaccard") is not None for r in rows for kind in KIND_LABELS
        ),
        "labels": [r["name"] for r in rows],
        "ylabel": "above-median Jaccard",
        "datasets": [
            {
                "label": label,
                "color": KIND_COLOURS[kind],
                "data": [(r.get(kind) or {}).get("jaccard") for r in rows],
            }
            for kind, label in KIND_LABELS.items()
        ],
    }


def discard_matrix(
    discard: list[dict[str, Any]], names: dict[str, str]
) -> tuple[list[str], list[dict[str, Any]]]:
    domains = sorted({r["domain"] for r in discard})
    rows: dict[str, dict[str, Any]] = {}
    for r in discard:
        rows.setdefault(
            r["dimension"], {"name": names.get(r["dimension"], r["dimension"]), "cells": {}}
        )
        rows[r["dimension"]]["cells"][r["domain"]] = r
    ordered = [
        {"name": rows[d]["name"], "cells": [rows[d]["cells"].get(dom) for dom in domains]}
        for d in sorted(rows, key=_order(names))
    ]
    return domains, ordered


def reasoning(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            **r,
            "n_points": r.get("n_points", len(r["points"])),
            "label": KIND_LABELS.get(r["kind"], r["kind"]),
            "color": KIND_COLOURS.get(r["kind"], "#555"),
        }
        for r in result.get("reasoning", [])
        if r.get("points")
    ]


def coverage_charts(result: dict[str, Any], models: dict[str, str]) -> list[dict[str, Any]]:
    """One coverage-accuracy chart per configuration that scored anything."""
    charts = []
    for c in result.get("coverage_accuracy", []):
        if not c["points"] or not c["points"][0]["n_kept"]:
            continue
        charts.append(
            {
                **c,
                "label": KIND_LABELS.get(c["kind"], c["kind"]),
                "model": models.get(c["kind"], ""),
                "color": KIND_COLOURS.get(c["kind"], "#555"),
            }
        )
    return charts


def verdict_table(
    verdicts: list[dict[str, Any]], names: dict[str, str]
) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    """(dimensions, rows): one row per reviewer, one verdict cell per dimension."""
    dims = sorted({v["dimension"] for v in verdicts}, key=_order(names))
    by_reviewer: dict[str, dict[str, Any]] = {}
    for v in verdicts:
        by_reviewer.setdefault(v["reviewer"], {})[v["dimension"]] = v
    rows = [
        {"reviewer": reviewer, "cells": [cells.get(d) for d in dims]}
        for reviewer, cells in sorted(by_reviewer.items())
    ]
    return [(d, names.get(d, d)) for d in dims], rows


def alignment_table(curve: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (configuration, k, dimension): alpha, n, coverage and discard rate."""
    return [
        {
            "config": r["kind"],
            "k": r["k"],
            "dimension": r["dimension"],
            "alpha": r["alpha"],
            "per_reviewer_alpha": r.get("within_alpha"),
            "level_only_alpha": r.get("baseline_alpha"),
            "lift": r.get("lift"),
            "lift_low": r.get("lift_low"),
            "lift_high": r.get("lift_high"),
            "adds_nothing": r.get("adds_nothing"),
            "lift_status": r.get("lift_status"),
            "n": r["n"],
            "coverage": r.get("coverage"),
            "discard_rate": r["discard_rate"],
        }
        for r in curve
    ]


def with_current_verdicts(result: dict[str, Any]) -> dict[str, Any]:
    """A stored report whose verdicts and lift words follow today's rule (engine.level,
    engine.alignment.verdict_again): a snapshot computed before the rule changed must not
    show "adds nothing" beside a lift whose figures say otherwise."""
    if not result:
        return result
    curve = []
    for r in result.get("curve", []):
        status = levels.lift_status(r.get("lift"), r.get("lift_low"))
        text = levels.lift_sentence(
            r.get("lift"),
            r.get("lift_low"),
            r.get("lift_high"),
            n_departs=r.get("n_departs"),
            n=r.get("n_baseline"),
        )
        curve.append(
            {**r, "lift_status": status, "adds_nothing": status == levels.NIL, "lift_text": text}
        )
    return {
        **result,
        "curve": curve,
        "verdicts": [verdict_again(v) for v in result.get("verdicts", [])],
    }
