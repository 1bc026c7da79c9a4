"""Writes for the judges: configurations, run scheduling, execution, cancellation.

Invariants
- At most one queued/running run per scope (partial unique constraint on scope_key): re-triggers
  return the existing run; a re-trigger while it runs sets `rerun_requested`, and a fresh run
  follows when it finishes (the later run supersedes the earlier one on every page).
- A run is executed under a PostgreSQL session advisory lock on its id, so two deliveries of the
  same task never work on it at once, and a worker killed mid-run releases it with its connection.
- Per-seed predictions are upserted under (run, reviewer, idea, dimension, kind, k, seed) and the
  executor skips targets that already have one: a retried task finishes the run, no duplicates.
- Progress and cost are recomputed from the stored predictions, never incremented, so a resumed
  run does not count a call twice.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Sum
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.core.errors import ApplicationError, FieldError, NotFound, PermissionDenied
from apps.judges import selectors
from apps.judges.models import JudgeConfig, JudgeFinal, JudgeHistory, JudgePrediction, JudgeRun
from apps.screening.models import Dimension

log = logging.getLogger(__name__)

DEFAULT_SHOTS = [0, 1, 2, 5, 9]
CONFIG_FIELDS = [
    "name",
    "kind",
    "backend",
    "model",
    "base_url",
    "shots",
    "seeds",
    "temperature",
    "confidence_threshold",
    "min_history",
    "concurrency",
    "is_active",
    "auto",
]
ADVISORY_LOCK_CLASS = 8808  # namespace of the (class, id) advisory lock pair for judge runs
CHUNK_SIZE = 16


def default_backend() -> str:
    """An LLM when one is configured, otherwise the local statistical baseline."""
    return JudgeConfig.Backend.OPENAI if settings.LLM_BASE_URL else JudgeConfig.Backend.LOCAL


# --------------------------------------------------------------------------- configurations


def _config_snapshot(config: JudgeConfig) -> dict[str, Any]:
    return {f: getattr(config, f) for f in CONFIG_FIELDS}


def _validate_config(data: dict[str, Any]) -> None:
    errors: list[FieldError] = []
    if "kind" in data and data["kind"] not in JudgeConfig.Kind.values:
        errors.append(
            FieldError(
                "kind", "must be zero_shot, aggregate or personalized", value=str(data["kind"])
            )
        )
    if "backend" in data and data["backend"] not in JudgeConfig.Backend.values:
        errors.append(FieldError("backend", "must be openai or local", value=str(data["backend"])))
    if "shots" in data:
        shots = data["shots"] if isinstance(data["shots"], list) else [data["shots"]]
        try:
            ks = [int(k) for k in shots]
        except (TypeError, ValueError):
            errors.append(FieldError("shots", "must be whole numbers", value=str(data["shots"])))
        else:
            if any(k < 0 or k > 50 for k in ks):
                errors.append(
                    FieldError("shots", "each k must be between 0 and 50", value=str(shots))
                )
            data["shots"] = sorted(set(ks))
    if "confidence_threshold" in data and not 0 <= int(data["confidence_threshold"]) <= 100:
        errors.append(
            FieldError(
                "confidence_threshold",
                "must be between 0 and 100",
                value=str(data["confidence_threshold"]),
            )
        )
    for name in ("seeds", "concurrency", "min_history"):
        if name in data and int(data[name]) < 1:
            errors.append(FieldError(name, "must be at least 1", value=str(data[name])))
    if errors:
        raise ApplicationError("The judge configuration was not saved.", errors=errors)


@transaction.atomic
def judge_config_create(*, by: User | None, **data: Any) -> JudgeConfig:
    _validate_config(data)
    if JudgeConfig.objects.filter(name=data.get("name", "")).exists():
        raise ApplicationError(
            "The judge configuration was not saved.",
            errors=[FieldError("name", "already in use", value=data.get("name"))],
        )
    config = JudgeConfig.objects.create(**data)
    JudgeHistory.objects.create(
        event=JudgeHistory.Event.CONFIG_CREATED,
        config=config,
        changed_by=by,
        new_value=_config_snapshot(config),
    )
    return config


@transaction.atomic
def judge_config_update(*, config: JudgeConfig, by: User | None, **data: Any) -> JudgeConfig:
    _validate_config(data)
    config = JudgeConfig.objects.select_for_update().get(pk=config.pk)
    old = _config_snapshot(config)
    for name, value in data.items():
        if name in CONFIG_FIELDS:
            setattr(config, name, value)
    new = _config_snapshot(config)
    if new != old:
        config.save()
        changed = [f for f in CONFIG_FIELDS if old[f] != new[f]]
        JudgeHistory.objects.create(
            event=JudgeHistory.Event.CONFIG_CHANGED,
            config=config,
            changed_by=by,
            old_value={f: old[f] for f in changed},
            new_value={f: new[f] for f in changed},
        )
    return config


@transaction.atomic
def judge_config_delete(*, config: JudgeConfig, by: User | None) -> None:
    """Deactivating keeps old predictions readable; deleting is refused once runs used it."""
    if config.runs.exists():
        raise ApplicationError(
            f"Configuration {config.name!r} was used by judge runs; "
            "deactivate it instead (is_active=false)."
        )
    JudgeHistory.objects.create(
        event=JudgeHistory.Event.CONFIG_DELETED,
        config=config,
        changed_by=by,
        old_value=_config_snapshot(config),
    )
    config.delete()


def judge_configs_ensure_defaults() -> None:
    """Create the three paper configurations once, on the default backend, if none exist."""
    if JudgeConfig.objects.exists():
        return
    backend = default_backend()
    for kind, shots in (
        ("zero_shot", [0]),
        ("aggregate", DEFAULT_SHOTS),
        ("personalized", DEFAULT_SHOTS),
    ):
        try:
            with transaction.atomic():
                config, created = JudgeConfig.objects.get_or_create(
                    name=f"{kind.replace('_', '-')} (default)",
                    # The local baseline's confidence is the weighted share of its examples that
                    # agree, not a self-report; 80 (the paper's LLM threshold) would discard most.
                    defaults={
                        "kind": kind,
                        "backend": backend,
                        "shots": shots,
                        "confidence_threshold": 80 if backend == JudgeConfig.Backend.OPENAI else 50,
                    },
                )
                if created:
                    JudgeHistory.objects.create(
                        event=JudgeHistory.Event.CONFIG_CREATED,
                        config=config,
                        new_value=_config_snapshot(config),
                        note="default",
                    )
        except IntegrityError:  # created concurrently by another process
            pass


# --------------------------------------------------------------------------- scheduling


def _scope_key(
    *,
    purpose: str,
    reviewer_id: int | None,
    domain_id: int,
    dimensions: Sequence[str],
    config_ids: Sequence[int],
    shots: Sequence[int],
    seeds: int | None,
    backend: str,
) -> str:
    if purpose in (JudgeRun.Purpose.LOO_EVALUATION, JudgeRun.Purpose.PREDICTION):
        # Automatic runs: one per reviewer, domain and dimension whatever the configuration mix.
        return f"{purpose}:r{reviewer_id}:d{domain_id}:{','.join(sorted(dimensions))}"
    return (
        f"{purpose}:d{domain_id}:{','.join(sorted(dimensions))}"
        f":c{','.join(map(str, sorted(config_ids)))}"
        f":k{','.join(map(str, sorted(shots)))}:s{seeds or ''}:b{backend}"
    )


def _history_status(
    run: JudgeRun, old: str, new: str, *, by: User | None = None, note: str = ""
) -> None:
    JudgeHistory.objects.create(
        event=JudgeHistory.Event.RUN_STATUS,
        run=run,
        changed_by=by,
        old_value={"status": old} if old else None,
        new_value={"status": new},
        note=note,
    )


def _enqueue(run_id: int, countdown: float) -> None:
    from apps.judges.tasks import judge_run_execute_task

    judge_run_execute_task.apply_async((run_id,), countdown=countdown or None)


def _looks_lost(run: JudgeRun, countdown: float) -> bool:
    grace = float(getattr(settings, "JUDGE_REQUEUE_AFTER_SECONDS", 600)) + countdown
    return (timezone.now() - run.updated_at).total_seconds() > grace


@transaction.atomic
def judge_run_request(
    *,
    purpose: str,
    domain: Domain,
    dimensions: Sequence[str],
    configs: Sequence[JudgeConfig],
    reviewer: User | None = None,
    shots: Sequence[int] = (),
    seeds: int | None = None,
    backend: str = "",
    min_history: int | None = None,
    requested_by: User | None = None,
    countdown: float = 0,
    enqueue: bool = True,
) -> tuple[JudgeRun, bool]:
    """Queue a run for this scope unless one is already queued or running; (run, created).

    Enqueues the Celery task after commit (with `countdown` as the debounce delay).
    """
    if not configs:
        raise ApplicationError(
            "Choose at least one judge configuration.",
            errors=[FieldError("configs", "no configuration selected")],
        )
    if not dimensions:
        raise ApplicationError(
            "Choose at least one dimension.",
            errors=[FieldError("dimensions", "no dimension selected")],
        )
    known = {d.key for d in selectors.dimensions_for_domain(domain)}
    unknown = [d for d in dimensions if d not in known]
    if unknown:
        raise ApplicationError(
            "Unknown dimension for this domain's rubric.",
            errors=[
                FieldError("dimensions", f"not in the rubric of {domain.key}", value=d)
                for d in unknown
            ],
        )
    if backend and backend not in JudgeConfig.Backend.values:
        raise ApplicationError(
            "Unknown backend.",
            errors=[FieldError("backend", "must be openai or local", value=backend)],
        )
    key = _scope_key(
        purpose=purpose,
        reviewer_id=reviewer.id if reviewer else None,
        domain_id=domain.id,
        dimensions=dimensions,
        config_ids=[c.id for c in configs],
        shots=shots,
        seeds=seeds,
        backend=backend,
    )
    existing = (
        JudgeRun.objects.select_for_update()
        .filter(scope_key=key, status__in=JudgeRun.ACTIVE)
        .first()
    )
    if existing is not None:
        if existing.status == JudgeRun.Status.RUNNING and purpose != JudgeRun.Purpose.STUDY:
            existing.rerun_requested = True
            existing.save(update_fields=["rerun_requested", "updated_at"])
        elif (
            existing.status == JudgeRun.Status.QUEUED
            and enqueue
            and _looks_lost(existing, countdown)
        ):
            # Its message may have been lost (broker down at enqueue time): send it again. A
            # duplicate delivery is harmless, the claim and the advisory lock see to that.
            existing.save(update_fields=["updated_at"])
            transaction.on_commit(lambda: _enqueue(existing.id, 0))
        return existing, False
    try:
        with transaction.atomic():
            run = JudgeRun.objects.create(
                purpose=purpose,
                reviewer=reviewer,
                domain=domain,
                dimensions=sorted(dimensions),
                shots=sorted({int(k) for k in shots}),
                seeds=seeds,
                backend=backend,
                min_history=min_history,
                scope_key=key,
                requested_by=requested_by,
            )
    except IntegrityError:  # another process queued the same scope between our read and insert
        return JudgeRun.objects.get(scope_key=key, status__in=JudgeRun.ACTIVE), False
    run.configs.set(configs)
    _history_status(run, "", JudgeRun.Status.QUEUED, by=requested_by)
    if enqueue:
        transaction.on_commit(lambda: _enqueue(run.id, countdown))
    return run, True


def judge_ratings_changed(*, reviewer_ids: Iterable[int]) -> None:
    """Called after commit whenever these reviewers' ratings change. Schedules judge work.

    For each (domain, dimension) where the reviewer has at least `min_history` scored ratings:
    a leave-one-out evaluation with every active automatic configuration, and a prediction run
    over the domain's ideas they have not rated (personalized configurations). Debounced by
    settings.JUDGE_DEBOUNCE_SECONDS; an already queued run is reused (it reads the ratings when
    it starts).
    """
    judge_configs_ensure_defaults()
    configs = selectors.active_auto_configs()
    if not configs:
        return
    countdown = float(getattr(settings, "JUDGE_DEBOUNCE_SECONDS", 30))
    domains = {d.id: d for d in Domain.objects.all()}
    reviewers = {u.id: u for u in User.objects.filter(id__in=list(reviewer_ids))}
    for reviewer_id, reviewer in reviewers.items():
        profile_domains = (
            set(reviewer.reviewer_profile.domains.values_list("id", flat=True))
            if hasattr(reviewer, "reviewer_profile")
            else set()
        )
        for row in selectors.reviewer_history_counts(reviewer_id=reviewer_id):
            domain = domains.get(row["idea__patent__domain_id"])
            if domain is None:
                continue
            eligible = [c for c in configs if row["n"] >= c.min_history]
            if not eligible:
                continue
            dims = [row["dimension__key"]]
            judge_run_request(
                purpose=JudgeRun.Purpose.LOO_EVALUATION,
                domain=domain,
                dimensions=dims,
                configs=eligible,
                reviewer=reviewer,
                countdown=countdown,
            )
            personal = [c for c in eligible if c.kind == JudgeConfig.Kind.PERSONALIZED]
            if personal and (not profile_domains or domain.id in profile_domains):
                judge_run_request(
                    purpose=JudgeRun.Purpose.PREDICTION,
                    domain=domain,
                    dimensions=dims,
                    configs=personal,
                    reviewer=reviewer,
                    countdown=countdown,
                )


def judge_study_start(
    *,
    by: User | None,
    domain: Domain,
    dimensions: Sequence[str],
    configs: Sequence[JudgeConfig],
    shots: Sequence[int],
    seeds: int,
    backend: str = "",
    min_history: int = 2,
    enqueue: bool = True,
) -> tuple[JudgeRun, bool]:
    """An admin's study: every reviewer with enough history, leave-one-out, chosen k and seeds."""
    if by is not None and not by.is_admin:
        raise PermissionDenied("Only admins start judge studies.")
    errors = []
    if seeds < 1 or seeds > 10:
        errors.append(FieldError("seeds", "must be between 1 and 10", value=str(seeds)))
    if not shots or any(int(k) < 0 or int(k) > 50 for k in shots):
        errors.append(
            FieldError(
                "shots", "give one or more k between 0 and 50", value=",".join(map(str, shots))
            )
        )
    if errors:
        raise ApplicationError("The study was not started.", errors=errors)
    return judge_run_request(
        purpose=JudgeRun.Purpose.STUDY,
        domain=domain,
        dimensions=dimensions,
        configs=configs,
        shots=shots,
        seeds=seeds,
        backend=backend,
        min_history=min_history,
        requested_by=by,
        enqueue=enqueue,
    )


@transaction.atomic
def judge_run_cancel(*, run: JudgeRun, by: User | None) -> JudgeRun:
    """Stop a queued or running run; the executor checks the status between chunks."""
    old = run.status
    n = JudgeRun.objects.filter(id=run.id, status__in=JudgeRun.ACTIVE).update(
        status=JudgeRun.Status.CANCELLED, finished_at=timezone.now(), updated_at=timezone.now()
    )
    if not n:
        raise ApplicationError(
            f"Run {run.id} is {run.get_status_display().lower()}; only queued or "
            "running runs can be cancelled."
        )
    _history_status(run, old, JudgeRun.Status.CANCELLED, by=by)
    run.refresh_from_db()
    return run


# --------------------------------------------------------------------------- execution


@dataclass(frozen=True)
class WorkUnit:
    config_id: int
    kind: str
    k: int
    seed: int
    reviewer_id: int
    idea_id: int
    dimension_id: int

    @property
    def key(self) -> tuple[int, int, int, str, int, int]:
        return (self.reviewer_id, self.idea_id, self.dimension_id, self.kind, self.k, self.seed)


@contextmanager
def _run_lock(run_id: int) -> Iterator[bool]:
    """Session advisory lock: released explicitly, or by PostgreSQL when the worker dies."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s, %s)", [ADVISORY_LOCK_CLASS, run_id])
        got = bool(cur.fetchone()[0])
    try:
        yield got
    finally:
        if got:
            with connection.cursor() as cur:
                cur.execute("SELECT pg_advisory_unlock(%s, %s)", [ADVISORY_LOCK_CLASS, run_id])


def _k_values(run: JudgeRun, config: JudgeConfig) -> list[int]:
    if config.kind == JudgeConfig.Kind.ZERO_SHOT:
        return [0]
    if run.purpose == JudgeRun.Purpose.PREDICTION:
        return [max(config.k_values)]
    if run.shots:
        return sorted({int(k) for k in run.shots})
    return config.k_values


def _plan(run: JudgeRun, dims: list[Dimension]) -> list[WorkUnit]:
    """Every (config, k, seed, target) of the run, in a stable order."""
    configs = list(run.configs.order_by("kind", "id"))
    units: list[WorkUnit] = []
    for dim in dims:
        if run.purpose == JudgeRun.Purpose.PREDICTION:
            targets = [
                (run.reviewer_id, i)
                for i in selectors.reviewer_unrated_idea_ids(
                    reviewer_id=run.reviewer_id, domain=run.domain
                )
            ]
        else:
            pool = selectors.rating_pool_frame(domain=run.domain, dimension_ids=[dim.id])
            if run.purpose == JudgeRun.Purpose.LOO_EVALUATION:
                pool = pool[pool["reviewer_id"] == run.reviewer_id]
            else:
                min_history = run.min_history or min(c.min_history for c in configs)
                counts = pool.groupby("reviewer_id")["rating_id"].transform("count")
                pool = pool[counts >= min_history]
            targets = sorted(
                zip(pool["reviewer_id"].astype(int), pool["idea_id"].astype(int), strict=True)
            )
        for config in configs:
            seeds = run.seeds or config.seeds
            for k in _k_values(run, config):
                for seed in range(seeds):
                    for reviewer_id, idea_id in targets:
                        units.append(
                            WorkUnit(config.id, config.kind, k, seed, reviewer_id, idea_id, dim.id)
                        )
    return units


def _rubric_dimension(dim: Dimension) -> Any:
    from apps.judges.backends.base import RubricDimension

    return RubricDimension(
        key=dim.key,
        name=dim.name,
        description=dim.description,
        scale_min=dim.scale_min,
        scale_max=dim.scale_max,
        levels={int(k): str(v) for k, v in (dim.levels or {}).items()},
        categories=tuple(int(c) for c in (dim.categories or [])),
    )


class _Texts:
    """Renders patents and ideas once per run, the way the prompt module expects them."""

    def __init__(self) -> None:
        from apps.judges.prompting import idea_text, patent_text

        self._patent_text, self._idea_text = patent_text, idea_text
        self._cache: dict[int, tuple[str, str]] = {}

    def load(self, idea_ids: Iterable[int]) -> None:
        missing = [i for i in set(idea_ids) if i not in self._cache]
        for idea_id, idea in selectors.idea_rows(missing).items():
            p = idea.patent
            self._cache[idea_id] = (
                self._patent_text(p.title, p.abstract, p.claims),
                self._idea_text(
                    idea.title, idea.description, idea.implementation, idea.differentiation
                ),
            )

    def __getitem__(self, idea_id: int) -> tuple[str, str]:
        return self._cache[idea_id]


def _backend_for(run: JudgeRun, config: JudgeConfig) -> tuple[Any, str]:
    from apps.judges.backends.base import get_backend

    name = run.backend or config.backend
    if name == JudgeConfig.Backend.LOCAL:
        return get_backend("local"), ""
    if not (config.base_url or settings.LLM_BASE_URL):
        raise ApplicationError(
            f"Configuration {config.name!r} uses the openai backend but no endpoint is set: "
            "set LLM_BASE_URL or the configuration's base_url."
        )
    options: dict[str, Any] = {}
    if config.base_url:
        options["base_url"] = config.base_url
    model = config.model or settings.LLM_MODEL
    options["model"] = model
    # Optional operator knobs for the SDK-level retries (the backend's defaults otherwise).
    knobs = (("LLM_MAX_RETRIES", "max_retries"), ("LLM_BACKOFF_BASE", "backoff_base"))
    for setting, option in knobs:
        if hasattr(settings, setting):
            options[option] = getattr(settings, setting)
    return get_backend("openai", **options), model


def _refresh_progress(run_id: int) -> None:
    """Recompute counters and cost from stored predictions (idempotent under retries)."""
    preds = JudgePrediction.objects.filter(run_id=run_id)
    sums = preds.aggregate(
        tin=Sum("prompt_tokens"),
        tout=Sum("completion_tokens"),
        tcached=Sum("cached_tokens"),
        calls=Sum("attempts"),
    )
    tin, tout = sums["tin"] or 0, sums["tout"] or 0
    price_in = Decimal(str(getattr(settings, "LLM_PRICE_IN_PER_MTOK", 0.15)))
    price_out = Decimal(str(getattr(settings, "LLM_PRICE_OUT_PER_MTOK", 0.60)))
    cost = (Decimal(tin) * price_in + Decimal(tout) * price_out) / Decimal(1_000_000)
    JudgeRun.objects.filter(id=run_id).update(
        done=preds.count(),
        failed=preds.exclude(error="").count(),
        tokens_in=tin,
        tokens_out=tout,
        tokens_cached=sums["tcached"] or 0,
        calls=sums["calls"] or 0,
        estimated_cost=cost,
        updated_at=timezone.now(),
    )


def _store(
    run: JudgeRun,
    backend_name: str,
    model: str,
    units: list[WorkUnit],
    requests: list[Any],
    replies: list[Any],
) -> None:
    rows = []
    for unit, request, reply in zip(units, requests, replies, strict=True):
        rows.append(
            JudgePrediction(
                run_id=run.id,
                config_id=unit.config_id,
                kind=unit.kind,
                k=unit.k,
                seed=unit.seed,
                reviewer_id=unit.reviewer_id,
                idea_id=unit.idea_id,
                dimension_id=unit.dimension_id,
                score=reply.score if not reply.error else None,
                reason=reply.reason or "",
                confidence=reply.confidence,
                model=reply.model or model,
                backend=backend_name,
                prompt_fingerprint=reply.prompt_fingerprint or "",
                example_rating_ids=[e.item_id for e in request.examples],
                raw_reply=reply.raw or "",
                prompt_tokens=reply.prompt_tokens or 0,
                completion_tokens=reply.completion_tokens or 0,
                cached_tokens=reply.cached_prompt_tokens or 0,
                latency_ms=reply.latency_ms or 0,
                attempts=reply.attempts or 0,
                error=reply.error or "",
            )
        )
    JudgePrediction.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["run", "reviewer", "idea", "dimension", "kind", "k", "seed"],
        update_fields=[
            "config",
            "score",
            "reason",
            "confidence",
            "model",
            "backend",
            "prompt_fingerprint",
            "example_rating_ids",
            "raw_reply",
            "prompt_tokens",
            "completion_tokens",
            "cached_tokens",
            "latency_ms",
            "attempts",
            "error",
        ],
    )


def _status(run_id: int) -> str | None:
    return JudgeRun.objects.filter(id=run_id).values_list("status", flat=True).first()


def _execute(run: JudgeRun, *, chunk_size: int) -> str:
    from apps.judges.backends.base import Example, JudgeRequest, judge_many
    from apps.judges.examples import select_examples

    dims = selectors.dimensions_for_domain(run.domain, run.dimensions)
    if not dims:
        raise ApplicationError(f"No dimensions {run.dimensions} in the rubric of {run.domain.key}.")
    units = _plan(run, dims)
    JudgeRun.objects.filter(id=run.id).update(total=len(units))
    stored = set(
        JudgePrediction.objects.filter(run_id=run.id).values_list(
            "reviewer_id", "idea_id", "dimension_id", "kind", "k", "seed"
        )
    )
    pending = [u for u in units if u.key not in stored]
    configs = {c.id: c for c in run.configs.all()}
    dim_by_id = {d.id: d for d in dims}
    pools = {
        d.id: selectors.rating_pool_frame(domain=run.domain, dimension_ids=[d.id]) for d in dims
    }
    texts = _Texts()
    texts.load({u.idea_id for u in units} | {int(i) for p in pools.values() for i in p["idea_id"]})
    patent_of = {
        i: idea.patent_id for i, idea in selectors.idea_rows({u.idea_id for u in units}).items()
    }
    score_of = {
        int(r.rating_id): (int(r.idea_id), int(r.score))
        for p in pools.values()
        for r in p.itertuples()
    }
    backends: dict[int, tuple[Any, str]] = {}

    groups: dict[int, list[WorkUnit]] = defaultdict(list)
    for unit in pending:
        groups[unit.config_id].append(unit)
    for config_id, config_units in groups.items():
        config = configs[config_id]
        if config_id not in backends:
            backends[config_id] = _backend_for(run, config)
        backend, model = backends[config_id]
        model = model or getattr(backend, "model", "") or ""
        for start in range(0, len(config_units), chunk_size):
            if _status(run.id) != JudgeRun.Status.RUNNING:
                return "stopped"
            chunk = config_units[start : start + chunk_size]
            requests = []
            for u in chunk:
                dim = dim_by_id[u.dimension_id]
                ids = select_examples(
                    pools[u.dimension_id],
                    kind=u.kind,
                    target_reviewer_id=u.reviewer_id,
                    target_idea_id=u.idea_id,
                    target_patent_id=patent_of[u.idea_id],
                    domain=run.domain.key,
                    dimension=dim.key,
                    k=u.k,
                    seed=u.seed,
                )
                examples = tuple(
                    Example(
                        item_id=int(rid),
                        patent_text=texts[score_of[int(rid)][0]][0],
                        idea_text=texts[score_of[int(rid)][0]][1],
                        score=score_of[int(rid)][1],
                    )
                    for rid in ids
                )
                patent, idea = texts[u.idea_id]
                requests.append(
                    JudgeRequest(
                        dimension=_rubric_dimension(dim),
                        examples=examples,
                        patent_text=patent,
                        idea_text=idea,
                        seed=u.seed,
                        model=model,
                        temperature=config.temperature,
                    )
                )
            replies = judge_many(backend, requests, concurrency=config.concurrency)
            _store(run, backend.name, model, chunk, requests, replies)
            _refresh_progress(run.id)
    _refresh_progress(run.id)
    return "complete"


def _finalize(run: JudgeRun) -> None:
    """Majority vote over each target's kept seeds (postprocess.aggregate_seeds); upserted."""
    from apps.judges.postprocess import aggregate_seeds

    thresholds = dict(run.configs.values_list("id", "confidence_threshold"))
    groups: dict[tuple[int, int, int, str, int], list[JudgePrediction]] = defaultdict(list)
    for p in JudgePrediction.objects.filter(run_id=run.id).order_by("seed"):
        groups[(p.reviewer_id, p.idea_id, p.dimension_id, p.kind, p.k)].append(p)
    rows = []
    for (reviewer_id, idea_id, dimension_id, kind, k), preds in groups.items():
        threshold = thresholds.get(preds[0].config_id, 80)
        final = aggregate_seeds([(p.score, p.confidence) for p in preds], threshold=threshold)
        voters = [
            p
            for p in preds
            if p.score is not None and p.score == final.score and (p.confidence or 0) >= threshold
        ]
        voters.sort(key=lambda p: -(p.confidence or 0))
        # The reason shown (case view, reasoning similarity): a kept vote for the final score, or,
        # when every seed was discarded, the most confident scored reply, so the text is not lost.
        scored = sorted(
            (p for p in preds if p.score is not None), key=lambda p: -(p.confidence or 0)
        )
        reason = voters[0].reason if voters else (scored[0].reason if scored else "")
        rows.append(
            JudgeFinal(
                run_id=run.id,
                reviewer_id=reviewer_id,
                idea_id=idea_id,
                dimension_id=dimension_id,
                kind=kind,
                k=k,
                score=final.score,
                kept=final.kept,
                discarded=final.discarded,
                failed=final.failed,
                confidence=(
                    getattr(final, "confidence", None)
                    or (
                        round(sum(p.confidence or 0 for p in voters) / len(voters))
                        if voters
                        else None
                    )
                ),
                reason=reason,
            )
        )
    JudgeFinal.objects.bulk_create(
        rows,
        batch_size=1000,
        update_conflicts=True,
        unique_fields=["run", "reviewer", "idea", "dimension", "kind", "k"],
        update_fields=["score", "kept", "discarded", "failed", "confidence", "reason"],
    )


def _finish(run: JudgeRun, status: str, *, error: str = "") -> bool:
    n = JudgeRun.objects.filter(id=run.id, status=JudgeRun.Status.RUNNING).update(
        status=status, finished_at=timezone.now(), error=error[:5000], updated_at=timezone.now()
    )
    if n:
        _history_status(run, JudgeRun.Status.RUNNING, status, note=error[:500])
    return bool(n)


class RunDeferred(Exception):
    """The backend is temporarily unavailable; the task should retry the run later."""


def judge_run_execute(*, run_id: int, chunk_size: int = CHUNK_SIZE) -> str:
    """Claim and execute one run; safe to call twice or after a crash (see module docstring).

    Returns what happened: "done", "locked" (another worker has it), "not-found", or the status
    the run already had ("done", "cancelled", "failed").
    """
    from apps.judges.backends.base import PermanentBackendError, TransientBackendError

    with _run_lock(run_id) as got:
        if not got:
            return "locked"
        claimed = JudgeRun.objects.filter(id=run_id, status=JudgeRun.Status.QUEUED).update(
            status=JudgeRun.Status.RUNNING, started_at=timezone.now(), updated_at=timezone.now()
        )
        run = JudgeRun.objects.select_related("domain", "reviewer").filter(id=run_id).first()
        if run is None:
            return "not-found"
        if claimed:
            _history_status(run, JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING)
        elif run.status != JudgeRun.Status.RUNNING:
            return run.status
        else:
            log.info("Resuming judge run %s (a previous worker stopped mid-run)", run_id)
        try:
            outcome = _execute(run, chunk_size=chunk_size)
            if outcome != "complete":
                return _status(run_id) or "not-found"
            _finalize(run)
        except TransientBackendError as exc:
            # The run stays "running": the retried task resumes it, skipping stored targets.
            raise RunDeferred(str(exc)) from exc
        except SoftTimeLimitExceeded as exc:
            # A long run continues in a fresh task rather than failing: the work done is stored.
            raise RunDeferred("time limit reached; continuing in a new task") from exc
        except (PermanentBackendError, ApplicationError) as exc:
            _finish(run, JudgeRun.Status.FAILED, error=str(exc))
            return JudgeRun.Status.FAILED
        except Exception as exc:
            log.exception("Judge run %s failed", run_id)
            _finish(run, JudgeRun.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
            return JudgeRun.Status.FAILED
        _finish(run, JudgeRun.Status.DONE)
    run.refresh_from_db()
    if run.rerun_requested and run.purpose != JudgeRun.Purpose.STUDY and run.reviewer is not None:
        judge_run_request(
            purpose=run.purpose,
            domain=run.domain,
            dimensions=run.dimensions,
            configs=list(run.configs.all()),
            reviewer=run.reviewer,
            countdown=float(getattr(settings, "JUDGE_DEBOUNCE_SECONDS", 30)),
        )
    return JudgeRun.Status.DONE


def judge_run_fail(*, run_id: int, error: str) -> bool:
    """Give up on a running run (e.g. the endpoint stayed down through every retry)."""
    run = JudgeRun.objects.filter(id=run_id).first()
    return bool(run) and _finish(run, JudgeRun.Status.FAILED, error=error)


def judge_run_get(*, run_id: int) -> JudgeRun:
    run = JudgeRun.objects.filter(id=run_id).first()
    if run is None:
        raise NotFound(f"Judge run {run_id} does not exist.")
    return run
