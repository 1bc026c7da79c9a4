"""Reads of judge configurations and runs: listings, studies, the newest finished runs, progress."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, Q, QuerySet, Sum

from apps.catalog.models import Domain
from apps.judges.models import (
    JudgeConfig,
    JudgePrediction,
    JudgeRun,
)
from apps.judges.selectors.common import model_label


def active_auto_configs() -> list[JudgeConfig]:
    return list(JudgeConfig.objects.filter(is_active=True, auto=True).order_by("kind", "id"))


RUN_ORIGINS = {
    # Leave-one-out evaluations and predictions start by themselves after saved ratings.
    "automatic": ~Q(purpose=JudgeRun.Purpose.STUDY),
    "studies": Q(purpose=JudgeRun.Purpose.STUDY),
}


def judge_runs(*, limit: int = 50, origin: str = "", status: str = "") -> QuerySet[JudgeRun]:
    runs = JudgeRun.objects.select_related("reviewer", "domain", "requested_by")
    if origin in RUN_ORIGINS:
        runs = runs.filter(RUN_ORIGINS[origin])
    if status:
        runs = runs.filter(status=status)
    return runs.prefetch_related("configs").order_by("-created_at", "-id")[:limit]


def study_run(*, run_id: int) -> JudgeRun | None:
    return JudgeRun.objects.filter(id=run_id, purpose=JudgeRun.Purpose.STUDY).first()


# What current_run_ids reads of each run, in its order (a values_list of them).
CURRENT_RUN_FIELDS = ("id", "purpose", "reviewer_id", "domain_id", "dimensions", "scope_key")


def latest_done_runs(
    *, purpose: str, domain: Domain | None = None, reviewer_id: int | None = None
) -> list[int]:
    """Ids of the finished runs still current (a later run supersedes earlier ones: see
    current_run_ids)."""
    qs = JudgeRun.objects.filter(purpose=purpose, status=JudgeRun.Status.DONE)
    if domain is not None:
        qs = qs.filter(domain=domain)
    if reviewer_id is not None:
        qs = qs.filter(reviewer_id=reviewer_id)
    return current_run_ids(qs.order_by("finished_at", "id").values_list(*CURRENT_RUN_FIELDS))


def current_run_ids(runs: Iterable[tuple[int, str, int | None, int, list[str], str]]) -> list[int]:
    """Of these runs, (id, purpose, reviewer id, domain id, dimensions, scope key) oldest
    first, the ids still current, sorted.

    A study is superseded by a later study of the same scope. An automatic run (evaluation,
    prediction) by later runs of its purpose, reviewer and domain that together cover every
    one of its dimensions: automatic runs covered one dimension each until they were merged
    into one per reviewer and domain (services.scheduling), and the dimensions a run covers
    change as a reviewer's history reaches each configuration's minimum. A run that names no
    dimension is kept per scope, as a study."""
    newest: dict[str, int] = {}
    automatic: dict[tuple[str, int | None, int], list[tuple[int, list[str]]]] = {}
    for run_id, purpose, reviewer_id, domain_id, dims, scope in runs:
        if purpose in JudgeRun.AUTOMATIC and dims:
            automatic.setdefault((purpose, reviewer_id, domain_id), []).append((run_id, dims))
        else:
            newest[scope] = run_id
    out = list(newest.values())
    for group in automatic.values():
        covered: set[str] = set()
        for run_id, dims in reversed(group):
            if not set(dims) <= covered:
                out.append(run_id)
            covered.update(dims)
    return sorted(out)


def judge_work_progress() -> dict[str, int]:
    """Judge work across every run still to finish: one aggregate query."""
    agg = JudgeRun.objects.filter(status__in=JudgeRun.ACTIVE).aggregate(
        queued=Count("id", filter=Q(status=JudgeRun.Status.QUEUED)),
        running=Count("id", filter=Q(status=JudgeRun.Status.RUNNING)),
        done=Sum("done"),
        total=Sum("total"),
    )
    return {k: int(v or 0) for k, v in agg.items()}


def run_model_labels(*, run_ids: Iterable[int]) -> dict[tuple[int, str], list[str]]:
    """(run id, kind) -> the model and response mode labels of its predictions."""
    out: dict[tuple[int, str], list[str]] = {}
    rows = (
        JudgePrediction.objects.filter(run_id__in=list(run_ids))
        .values_list("run_id", "kind", "backend", "model", "response_mode")
        .distinct()
        .order_by("run_id", "kind", "model")
    )
    for run_id, kind, backend, model, mode in rows:
        label = model_label(backend=backend, model=model, response_mode=mode)
        labels = out.setdefault((run_id, kind), [])
        if label not in labels:
            labels.append(label)
    return out
