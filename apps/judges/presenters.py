"""Shape stored alignment snapshots into what the judge pages, CSVs and API show.

The shaping functions at the top are pure (dicts in, dicts out), so a chart, its table and its
CSV show the same numbers. The `*_page` functions below them gather one page's context through
the selectors (reads only: nothing here computes alignment), so the views stay thin.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.judges import selectors
from apps.judges.models import LOCAL_LABEL, AlignmentSnapshot, JudgeConfig, JudgeFinal, JudgeRun
from apps.judges.services.alignment import AUTO_SCOPE, scope_for_source
from apps.screening.models import Rating

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
    charts = []
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
                    "points": [
                        {"x": r["k"], "y": r["alpha"], "n": r["n"], "coverage": r.get("coverage")}
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
            "n": r["n"],
            "coverage": r.get("coverage"),
            "discard_rate": r["discard_rate"],
        }
        for r in curve
    ]


# ------------------------------------------------------------------------------- CSV tables

CSV_TABLES = ("curve", "coarse", "discard", "reasoning", "verdicts", "coverage")


def alignment_csv(*, table: str, scope: str) -> tuple[str, list[str], list[list[Any]]]:
    """One alignment CSV from the newest stored snapshot of the scope (empty when none)."""
    snapshot = selectors.alignment_snapshot_latest(scope=scope, with_points=table == "reasoning")
    if snapshot is None:
        return csv_table(table, {})
    points = snapshot.reasoning_points if table == "reasoning" else None
    return csv_table(table, snapshot.result or {}, reasoning_points=points)


def csv_table(
    table: str, result: dict[str, Any], *, reasoning_points: list[dict[str, Any]] | None = None
) -> tuple[str, list[str], list[list[Any]]]:
    """(filename, header, rows) of one alignment CSV, from a stored snapshot's result; the
    reasoning CSV takes every point (`reasoning_points`), not the chart's sample."""
    models = model_labels(result)
    if table == "curve":
        return (
            "judge-alignment.csv",
            ["dimension", "configuration", "model", "k", "alpha", "n", "coverage", "discard_rate"],
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


# ----------------------------------------------------------------------------- page context


@dataclass
class SnapshotState:
    """What a page says about its stored alignment: computed when, stale, being computed."""

    scope: str
    snapshot: AlignmentSnapshot | None
    pending: AlignmentSnapshot | None
    failure: AlignmentSnapshot | None
    stale: bool

    @property
    def result(self) -> dict[str, Any]:
        return (self.snapshot.result or {}) if self.snapshot else {}


def snapshot_state(scope: str, snapshot: AlignmentSnapshot | None = None) -> SnapshotState:
    snapshot = snapshot or selectors.alignment_snapshot_latest(scope=scope)
    return SnapshotState(
        scope=scope,
        snapshot=snapshot,
        pending=selectors.alignment_snapshot_pending(scope=scope),
        failure=selectors.alignment_snapshot_failure(
            scope=scope, after=snapshot.created_at if snapshot else None
        ),
        stale=selectors.alignment_snapshot_is_stale(snapshot) if snapshot else False,
    )


def runs_context(*, user: User, limit: int = 30) -> dict[str, Any]:
    runs = list(selectors.judge_runs(limit=limit))
    return {
        "runs": runs,
        "is_admin": user.is_admin,
        "any_active": any(r.is_active for r in runs),
        "limit": limit,
        "work": selectors.judge_work_progress(),
    }


def alignment_page(*, user: User, domain: Domain | None, source: str) -> dict[str, Any]:
    """The manager's alignment dashboard, from the stored snapshot of the chosen source."""
    scope = scope_for_source(source=source, domain_key=domain.key if domain else None)
    state = snapshot_state(scope)
    result = state.result
    names = selectors.dimension_names()
    models = model_labels(result)
    discard_domains, discard_rows = discard_matrix(result.get("discard", []), names)
    coarse = coarse_rows(result.get("coarse", []), names)
    verdict_dims, verdict_rows = verdict_table(result.get("verdicts", []), names)
    verdict_counts = [
        {
            "name": name,
            **{
                level: sum(1 for v in result.get("verdicts", []) if v["dimension"] == key
                           and v["level"] == level)
                for level in ("well", "partly", "not_yet")
            },
        }
        for key, name in verdict_dims
    ]  # fmt: skip
    gaps = [g for g in selectors.history_gaps() if g["missing"] and g["n"]]
    return {
        "domains": Domain.objects.order_by("name"),
        "domain": domain,
        "source": source,
        "sources": selectors.report_sources(domain=domain),
        "state": state,
        "report": result,
        "models": models,
        "model_rows": [(KIND_LABELS.get(k, k), v) for k, v in models.items()],
        "charts": chart_series(result.get("curve", []), names, models),
        "coarse_rows": coarse,
        "coarse_chart": coarse_chart(coarse),
        "discard_domains": discard_domains,
        "discard_rows": discard_rows,
        "reasoning": reasoning(result),
        "reasoning_missing": [
            KIND_LABELS.get(k, k)
            for k in {r["kind"] for r in result.get("curve", [])}
            - {r["kind"] for r in reasoning(result)}
        ],
        "coverage_charts": coverage_charts(result, models),
        "verdict_dims": verdict_dims,
        "verdict_rows": verdict_rows[:VERDICT_ROWS_SHOWN],
        "n_verdict_rows": len(verdict_rows),
        "verdict_counts": verdict_counts,
        "kinds": list(KIND_LABELS.items()),
        "gaps": gaps[:12],
        "n_gaps": len(gaps),
        "local_label": LOCAL_LABEL,
        "uses_local": JudgeConfig.objects.filter(
            is_active=True, backend=JudgeConfig.Backend.LOCAL
        ).exists(),
        "case_ideas": result.get("case_ideas", []),
        "recompute_scope": scope,
        **runs_context(user=user, limit=8),
    }


def my_judge_page(*, user: User) -> dict[str, Any]:
    """A reviewer's own judge: only their own section of the stored snapshot."""
    snapshot, mine = selectors.reviewer_alignment(reviewer_id=user.id)
    names = selectors.dimension_names()
    gaps = selectors.history_gaps(reviewer_ids=[user.id])
    state = snapshot_state(AUTO_SCOPE, snapshot) if snapshot else snapshot_state(AUTO_SCOPE)
    return {
        "state": state,
        "charts": chart_series(mine.get("curve", []), names),
        "coarse_rows": coarse_rows(mine.get("coarse", []), names),
        "verdicts": [
            {**v, "name": names.get(v["dimension"], v["dimension"])}
            for v in mine.get("verdicts", [])
        ],
        "gaps": [g for g in gaps if g["missing"]],
        "pending": JudgeRun.objects.filter(reviewer=user, status__in=JudgeRun.ACTIVE).count(),
        "kinds": list(KIND_LABELS.items()),
    }


def my_alignment_api(*, user: User) -> dict[str, Any]:
    _, mine = selectors.reviewer_alignment(reviewer_id=user.id)
    return {
        "reviewer": user.username,
        "curve": mine.get("curve", []),
        "coarse": mine.get("coarse", []),
        "verdicts": mine.get("verdicts", []),
        "history": [
            {k: g[k] for k in ("domain_key", "dimension", "n", "min_history", "missing")}
            for g in selectors.history_gaps(reviewer_ids=[user.id])
        ],
    }


def run_page(*, run: JudgeRun, user: User) -> dict[str, Any]:
    """Run detail and its polled status partial."""
    snapshot, rows = (None, [])
    pending = None
    if run.status == JudgeRun.Status.DONE:
        snapshot, rows = selectors.run_alignment_rows(run)
        scope = f"run-{run.id}" if run.purpose == JudgeRun.Purpose.STUDY else AUTO_SCOPE
        if snapshot is None:
            pending = selectors.alignment_snapshot_pending(scope=scope)
    labels = selectors.run_model_labels(run_ids=[run.id])
    configs = [
        {"config": c, "models": "; ".join(labels.get((run.id, c.kind), []))}
        for c in run.configs.all()
    ]
    feeds_alignment = run.purpose in (JudgeRun.Purpose.STUDY, JudgeRun.Purpose.LOO_EVALUATION)
    return {
        "run": run,
        "history": run.history.select_related("changed_by"),
        "configs": configs,
        "table": alignment_table(rows),
        "models": {kind: "; ".join(v) for (_, kind), v in labels.items()},
        "alignment_snapshot": snapshot,
        "alignment_pending": pending,
        # Poll while the run works, and after it while its alignment is still being computed.
        "poll": run.is_active
        or (feeds_alignment and run.status == "done" and snapshot is None and pending is not None),
        "feeds_alignment": feeds_alignment,
        "is_admin": user.is_admin,
        "work": selectors.judge_work_progress(),
    }


def case_page(*, idea: Idea) -> dict[str, Any]:
    """Per (dimension, reviewer): the reviewer's score, the personalized and aggregate judges'
    finals from the newest run at the largest k (paper 001, Appendix F)."""
    best: dict[tuple[int, int, str], JudgeFinal] = {}
    for f in selectors.case_finals(idea_id=idea.id):
        key = (f.dimension_id, f.reviewer_id, f.kind)
        cur = best.get(key)
        if cur is None or (f.k, f.run_id) > (cur.k, cur.run_id):
            best[key] = f
    truth = {
        (r.reviewer_id, r.dimension_id): r
        for r in Rating.objects.filter(idea=idea).select_related("dimension")
    }
    labels = selectors.run_model_labels(run_ids={f.run_id for f in best.values()})
    rows: dict[tuple[int, int], dict[str, Any]] = {}
    for (dim_id, reviewer_id, kind), f in best.items():
        row = rows.setdefault(
            (dim_id, reviewer_id),
            {
                "dimension": f.dimension,
                "reviewer": f.reviewer,
                "truth": truth.get((reviewer_id, dim_id)),
            },
        )
        row[kind] = f
        row[f"{kind}_model"] = "; ".join(labels.get((f.run_id, kind), []))
    ordered = sorted(rows.values(), key=lambda r: (r["dimension"].position, r["reviewer"].username))
    return {
        "idea": idea,
        "rows": ordered,
        "dimensions": list(dict.fromkeys(r["dimension"] for r in ordered)),
        **local_note(),
    }


def local_note() -> dict[str, Any]:
    uses_local = JudgeConfig.objects.filter(backend=JudgeConfig.Backend.LOCAL).exists()
    return {"uses_local": uses_local, "local_label": LOCAL_LABEL}


def _reviewer_medians(keys: set[tuple[int, int]]) -> dict[tuple[int, int], float]:
    if not keys:
        return {}
    scores: dict[tuple[int, int], list[int]] = defaultdict(list)
    for reviewer_id, dimension_id, score in Rating.objects.filter(
        status=Rating.Status.SCORED,
        reviewer_id__in={k[0] for k in keys},
        dimension_id__in={k[1] for k in keys},
    ).values_list("reviewer_id", "dimension_id", "score"):
        scores[(reviewer_id, dimension_id)].append(score)
    return {k: statistics.median(v) for k, v in scores.items() if v}


def prediction_rows(
    *, reviewer: User | None, domain: Domain | None, dimension: str | None
) -> list[dict[str, Any]]:
    """Finals of the latest prediction runs, with the reviewer's median, the shortlist flag
    (the cut of the top-50 % metric: at or above their own median) and the model label."""
    finals = list(
        selectors.unrated_predictions(
            reviewer_id=reviewer.id if reviewer else None, domain=domain, dimension=dimension
        )
    )
    medians = _reviewer_medians({(f.reviewer_id, f.dimension_id) for f in finals})
    labels = selectors.run_model_labels(run_ids={f.run_id for f in finals})
    rows = []
    for f in finals:
        median = medians.get((f.reviewer_id, f.dimension_id))
        shortlisted = f.score is not None and median is not None and f.score >= median
        rows.append(
            {
                "f": f,
                "median": median,
                "shortlisted": shortlisted,
                "model": "; ".join(labels.get((f.run_id, f.kind), [])),
            }
        )
    return rows


PREDICTION_CSV_HEADER = [
    "reviewer",
    "domain",
    "dimension",
    "idea",
    "idea_title",
    "predicted_score",
    "confidence",
    "reviewer_median",
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
            r["median"],
            r["shortlisted"],
            f.kept,
            r["model"],
            f.reason,
            f.run_id,
        ]


def predictions_page(
    *, form: Any, reviewer: User | None, domain: Domain | None, dimension: str | None
) -> dict[str, Any]:
    rows = prediction_rows(reviewer=reviewer, domain=domain, dimension=dimension)
    return {
        "form": form,
        "rows": rows[:PREDICTIONS_SHOWN],
        "n_rows": len(rows),
        "n_shortlisted": sum(r["shortlisted"] for r in rows),
        "work": selectors.judge_work_progress(),
        **local_note(),
        "gaps": [
            g
            for g in selectors.history_gaps(reviewer_ids=[reviewer.id] if reviewer else None)
            if g["missing"] and g["n"]
        ][:10],
    }


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
            "kept": r["f"].kept,
            "discarded": r["f"].discarded,
            "failed": r["f"].failed,
            "reason": r["f"].reason,
            "model": r["model"],
            "run": r["f"].run_id,
        }
        for r in rows
    ]


EMPTY_RESULT: dict[str, Any] = {
    "run_ids": [],
    "n_finals": 0,
    "n_predictions": 0,
    "curve": [],
    "coarse": [],
    "discard": [],
    "coverage_accuracy": [],
    "verdicts": [],
    "models": {},
    "case_ideas": [],
    "reasoning": [],
    "reasoning_note": "",
}


def alignment_api(*, domain_key: str | None, source: str) -> dict[str, Any]:
    """The API's view of the stored snapshot of a source (the same rows the pages show)."""
    scope = scope_for_source(source=source, domain_key=domain_key)
    state = snapshot_state(scope)
    return {
        **EMPTY_RESULT,
        **state.result,
        "snapshot": {
            "scope": scope,
            "computed_at": state.snapshot.computed_at if state.snapshot else None,
            "stale": state.stale,
            "pending": state.pending is not None,
            "failure": state.failure.error if state.failure else "",
        },
    }
