"""One page's context, gathered through the selectors from the stored alignment snapshots
(reads only: nothing here computes alignment), so the views stay thin."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import urlencode

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.judges import selectors
from apps.judges.engine.alignment import VERDICT_RULE
from apps.judges.models import (
    LOCAL_LABEL,
    AlignmentSnapshot,
    ItemTextChoice,
    JudgeConfig,
    JudgeFinal,
    JudgeRun,
)
from apps.judges.presenters.shapes import (
    KIND_LABELS,
    VERDICT_ROWS_SHOWN,
    alignment_table,
    chart_series,
    coarse_chart,
    coarse_rows,
    coverage_charts,
    discard_matrix,
    model_labels,
    reasoning,
    verdict_table,
    with_current_verdicts,
)
from apps.judges.services.alignment import AUTO_SCOPE, scope_for_source
from apps.judges.services.configs import config_cannot_run
from apps.judges.vectors import item_text_choices
from apps.screening.models import Rating


@dataclass
class SnapshotState:
    """What a page says about its stored alignment: computed when, stale, being computed."""

    scope: str
    snapshot: AlignmentSnapshot | None
    pending: AlignmentSnapshot | None
    failure: AlignmentSnapshot | None
    stale: bool

    @cached_property
    def result(self) -> dict[str, Any]:
        return with_current_verdicts(self.snapshot.result or {}) if self.snapshot else {}


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


def runs_context(
    *, user: User, limit: int = 30, origin: str = "", status: str = ""
) -> dict[str, Any]:
    runs = list(selectors.judge_runs(limit=limit, origin=origin, status=status))
    filters = {k: v for k, v in (("origin", origin), ("status", status)) if v}
    return {
        "runs": runs,
        "is_admin": user.is_admin,
        "any_active": any(r.is_active for r in runs),
        "limit": limit,
        "work": selectors.judge_work_progress(),
        "filters": filters,
        "filter_query": urlencode(filters),
    }


def skipped_configs() -> list[dict[str, str]]:
    """Active configurations the running settings cannot run, each with the reason: the
    automatic runs skip them (services.scheduling), and the judges page says so."""
    rows = []
    for config in JudgeConfig.objects.filter(is_active=True).order_by("kind", "name"):
        reason = config_cannot_run(config)
        if reason:
            rows.append({"name": config.name, "backend": config.backend_label, "reason": reason})
    return rows


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
        "verdict_rule": VERDICT_RULE,
        "kinds": list(KIND_LABELS.items()),
        "gaps": gaps[:12],
        "n_gaps": len(gaps),
        "local_label": LOCAL_LABEL,
        "uses_local": JudgeConfig.objects.filter(
            is_active=True, backend=JudgeConfig.Backend.LOCAL
        ).exists(),
        "case_ideas": result.get("case_ideas", []),
        "item_texts": item_text_rows(domain),
        "recompute_scope": scope,
        **runs_context(user=user, limit=8),
    }


PARTS_LABELS = dict(ItemTextChoice.PARTS_CHOICES)


def item_text_rows(domain: Domain | None) -> list[dict[str, Any]]:
    """Which item text parts each domain's offline text fallback reads, with the measured
    figures (stored by manage.py judge_item_parts; nothing is measured here)."""
    rows = []
    for choice in item_text_choices():
        if domain is not None and choice.domain_id != domain.id:
            continue
        m = choice.measurement or {}
        rows.append(
            {
                "domain": choice.domain.name,
                "parts": choice.parts,
                "label": PARTS_LABELS.get(choice.parts, choice.parts),
                "measured_at": choice.measured_at,
                "reason": m.get("reason", ""),
                "k": m.get("k"),
                "n_targets": m.get("n_targets", 0),
                "baseline": m.get("baseline_pooled_alpha"),
                "figures": [
                    {**f, "label": PARTS_LABELS.get(f["parts"], f["parts"]),
                     "chosen": f["parts"] == choice.parts}
                    for f in m.get("figures", [])
                ],
            }
        )  # fmt: skip
    return rows


def my_judge_page(*, user: User) -> dict[str, Any]:
    """A reviewer's own judge: only their own section of the stored snapshot."""
    snapshot, mine = selectors.reviewer_alignment(reviewer_id=user.id)
    mine = with_current_verdicts(mine)
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
    _, stored = selectors.reviewer_alignment(reviewer_id=user.id)
    mine = with_current_verdicts(stored)
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
    snapshot: AlignmentSnapshot | None = None
    rows: list[dict[str, Any]] = []
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
