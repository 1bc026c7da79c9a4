"""The judge CSV exports and API rows, from stored snapshots and prediction rows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from apps.judges import selectors
from apps.judges.presenters.shapes import model_labels, with_current_verdicts

CSV_TABLES = ("curve", "coarse", "discard", "reasoning", "verdicts", "coverage")


def alignment_csv(*, table: str, scope: str) -> tuple[str, list[str], list[list[Any]]]:
    """One alignment CSV from the newest stored snapshot of the scope (empty when none)."""
    snapshot = selectors.alignment_snapshot_latest(scope=scope, with_points=table == "reasoning")
    if snapshot is None:
        return csv_table(table, {})
    points = snapshot.reasoning_points if table == "reasoning" else None
    return csv_table(table, with_current_verdicts(snapshot.result or {}), reasoning_points=points)


def csv_table(
    table: str, result: dict[str, Any], *, reasoning_points: list[dict[str, Any]] | None = None
) -> tuple[str, list[str], list[list[Any]]]:
    """(filename, header, rows) of one alignment CSV, from a stored snapshot's result; the
    reasoning CSV takes every point (`reasoning_points`), not the chart's sample."""
    models = model_labels(result)
    if table == "curve":
        return (
            "judge-alignment.csv",
            [
                "dimension",
                "configuration",
                "model",
                "k",
                "alpha",
                "n",
                "coverage",
                "discard_rate",
                "per_reviewer_alpha",
                "n_reviewers",
                "level_only_alpha",
                "lift",
                "lift_low",
                "lift_high",
                "adds_nothing",
            ],
            [
                [
                    r["dimension"],
                    r["kind"],
                    models.get(r["kind"], ""),
                    r["k"],
                    r["alpha"],
                    r["n"],
                    r.get("coverage"),
                    r["discard_rate"],
                    r.get("within_alpha"),
                    r.get("n_reviewers"),
                    r.get("baseline_alpha"),
                    r.get("lift"),
                    r.get("lift_low"),
                    r.get("lift_high"),
                    r.get("adds_nothing"),
                ]
                for r in result.get("curve", [])
            ],
        )
    if table == "coarse":
        return (
            "judge-coarse-alignment.csv",
            [
                "dimension",
                "configuration",
                "model",
                "k",
                "above_median_jaccard",
                "top50_overlap",
                "n_reviewers",
                "n_undefined",
                "undefined_reason",
            ],
            [
                [
                    r["dimension"],
                    r["kind"],
                    models.get(r["kind"], ""),
                    r["k"],
                    r["jaccard"],
                    r["top50_overlap"],
                    r["n_reviewers"],
                    r.get("n_undefined", 0),
                    r.get("undefined_reason") or "",
                ]
                for r in result.get("coarse", [])
            ],
        )
    if table == "discard":
        return (
            "judge-discard-rates.csv",
            ["domain", "dimension", "predictions", "scored", "discarded", "failed", "discard_rate"],
            [
                [
                    r["domain"],
                    r["dimension"],
                    r["n_predictions"],
                    r["n_scored"],
                    r["n_discarded"],
                    r["n_failed"],
                    r["discard_rate"],
                ]
                for r in result.get("discard", [])
            ],
        )
    if table == "reasoning":
        pearson = {r["kind"]: r["pearson_r"] for r in result.get("reasoning", [])}
        full = reasoning_points if reasoning_points is not None else result.get("reasoning", [])
        return (
            "judge-reasoning.csv",
            [
                "configuration",
                "k",
                "reviewer_a",
                "reviewer_b",
                "agreement",
                "reason_similarity",
                "n_items",
                "pearson_r",
            ],
            [
                [
                    r["kind"],
                    r["k"],
                    p["reviewer_a"],
                    p["reviewer_b"],
                    p["agreement"],
                    p["similarity"],
                    p["n_items"],
                    pearson.get(r["kind"]),
                ]
                for r in full
                for p in r["points"]
            ],
        )
    if table == "verdicts":
        return (
            "judge-verdicts.csv",
            [
                "reviewer",
                "dimension",
                "configuration",
                "k",
                "verdict",
                "alpha",
                "alpha_low",
                "alpha_high",
                "n",
                "coverage",
                "level_only_alpha",
                "lift",
                "lift_low",
                "lift_high",
                "reason",
            ],
            [
                [
                    v["reviewer"],
                    v["dimension"],
                    v["kind"],
                    v["k"],
                    v["label"],
                    v["alpha"],
                    v["low"],
                    v["high"],
                    v["n"],
                    v["coverage"],
                    v.get("baseline_alpha"),
                    v.get("lift"),
                    v.get("lift_low"),
                    v.get("lift_high"),
                    v["reason"],
                ]
                for v in result.get("verdicts", [])
            ],
        )
    if table == "coverage":
        return (
            "judge-coverage-accuracy.csv",
            ["configuration", "model", "k", "threshold", "coverage", "accuracy", "n_kept"],
            [
                [
                    c["kind"],
                    models.get(c["kind"], ""),
                    c["k"],
                    p["threshold"],
                    p["coverage"],
                    p["accuracy"],
                    p["n_kept"],
                ]
                for c in result.get("coverage_accuracy", [])
                for p in c["points"]
            ],
        )
    raise ValueError(f"unknown table {table!r}")


PREDICTION_CSV_HEADER = [
    "reviewer",
    "domain",
    "dimension",
    "idea",
    "idea_title",
    "predicted_score",
    "confidence",
    "signal",
    "other_reviewers",
    "shortlisted",
    "kept_seeds",
    "model",
    "reason",
    "run",
]


def prediction_csv_rows(rows: Iterable[dict[str, Any]]) -> Iterable[list[Any]]:
    for r in rows:
        f = r["f"]
        yield [
            f.reviewer.username,
            f.run.domain.key,
            f.dimension.key,
            f.idea.external_id,
            f.idea.title,
            f.score,
            f.confidence,
            f.signal,
            f.panel_size,
            r["shortlisted"],
            f.kept,
            r["model"],
            f.reason,
            f.run_id,
        ]


def prediction_api_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "reviewer": r["f"].reviewer.username,
            "idea": r["f"].idea.external_id,
            "idea_id": r["f"].idea_id,
            "dimension": r["f"].dimension.key,
            "kind": r["f"].kind,
            "k": r["f"].k,
            "score": r["f"].score,
            "confidence": r["f"].confidence,
            "signal": r["f"].signal,
            "other_reviewers": r["f"].panel_size,
            "level_only_score": r["f"].level_score,
            "shortlisted": r["shortlisted"],
            "kept": r["f"].kept,
            "discarded": r["f"].discarded,
            "failed": r["f"].failed,
            "reason": r["f"].reason,
            "model": r["model"],
            "run": r["f"].run_id,
        }
        for r in rows
    ]


# The shortlist export's columns, exactly as issue 17 names them.
SHORTLIST_CSV_HEADER = [
    "reviewer",
    "domain",
    "dimension",
    "idea",
    "title",
    "rank",
    "predicted_score",
    "confidence",
    "signal",
]


def shortlist_csv_rows(entries: Iterable[Any]) -> Iterable[list[Any]]:
    """One row per shortlisted idea (selectors.shortlist_for, then
    selectors.panel_shortlist_for); ``dimension`` empty for the all-dimensions list, whose
    predicted_score is the mean position on the scales (0 to 1); ``reviewer`` empty for the
    domain's panel shortlist (the mean of its reviewers' predictions)."""
    for e in entries:
        reviewer = getattr(e, "reviewer", None)
        yield [
            reviewer.username if reviewer is not None else "",
            e.domain.key,
            e.dimension.key if e.dimension_id else "",
            e.idea.external_id,
            e.idea.title,
            e.rank,
            round(e.predicted_score, 4),
            e.confidence,
            e.signal,
        ]
