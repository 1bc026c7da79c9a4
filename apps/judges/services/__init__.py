"""Writes for the judges: configurations, run scheduling, execution, cancellation.

Invariants
- At most one queued/running run per scope (partial unique constraint on scope_key): re-triggers
  return the existing run; a re-trigger while it runs sets `rerun_requested`, and a fresh run
  follows when it finishes (the later run supersedes the earlier one on every page).
- A run is executed under a lock on its id (a PostgreSQL session advisory lock; a file lock on
  other databases), so two deliveries of the same task never work on it at once, and a worker
  killed mid-run releases it (with its connection, or its file descriptors).
- Per-seed predictions are upserted under (run, reviewer, idea, dimension, kind, k, seed) and the
  executor skips targets that already have one: a retried task finishes the run, no duplicates.
- Progress and cost are recomputed from the stored predictions, never incremented, so a resumed
  run does not count a call twice.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Sum
from django.db.models.functions import Now
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.core.errors import ApplicationError, FieldError, NotFound, PermissionDenied
from apps.judges import selectors
from apps.judges.models import JudgeConfig, JudgeFinal, JudgeHistory, JudgePrediction, JudgeRun
from apps.judges.services.alignment import alignment_runs_finished
from apps.screening.models import Dimension

log = logging.getLogger(__name__)

# The paper's k sweep: what studies (admin form, API, judge_study) use by default.
DEFAULT_SHOTS = [0, 1, 2, 5, 9]
# The automatic configurations evaluate fewer k: every reviewer, domain and dimension is
# re-evaluated after each burst of new ratings, and each k costs seeds x items judge calls.
# k = 2 and k = 9 (with zero-shot at k = 0) still draw alpha-against-k lines; the full sweep is
# a study's job (see docs/judges.md, "Automatic runs").
AUTO_SHOTS = [2, 9]
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
        ("aggregate", AUTO_SHOTS),
        ("personalized", AUTO_SHOTS),
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
    """These reviewers' ratings changed (called after their commit): schedule judge work.

    Only one small Celery task is sent, whatever the number of reviewers: deciding which runs
    to queue reads every reviewer's history, which after a large import takes long enough that
    it must not happen in the web request or the import. See `judge_runs_schedule`. The debounce
    is decided here, by the process where the change happened, and travels with the task, as
    does the moment of the change (a run that started after it has read it already).
    """
    ids = sorted({int(i) for i in reviewer_ids})
    if not ids:
        return
    countdown = float(getattr(settings, "JUDGE_DEBOUNCE_SECONDS", 30))
    transaction.on_commit(lambda: _enqueue_schedule(ids, countdown))


def _enqueue_schedule(reviewer_ids: list[int], countdown: float) -> None:
    from apps.judges.tasks import judge_runs_schedule_task

    try:
        # Scheduling takes seconds, not minutes: the default queue (an explicit queue wins over
        # the "judges.*" route), so new runs are queued without waiting behind a long judge run.
        judge_runs_schedule_task.apply_async(
            kwargs={
                "reviewer_ids": reviewer_ids,
                "countdown": countdown,
                # Called after the commit: every change this task is about happened before now.
                "changed_at": _db_now().isoformat(),
            },
            queue=judge_runs_schedule_task.app.conf.task_default_queue,
        )
    except Exception:  # kombu raises several types for an unreachable broker
        # The ratings are saved; the next change (or the next scheduling) picks them up.
        log.exception("could not enqueue judge scheduling for %s reviewers", len(reviewer_ids))


@dataclass(frozen=True)
class _Wanted:
    purpose: str
    reviewer_id: int
    domain_id: int
    dimension: str
    config_ids: tuple[int, ...]

    @property
    def key(self) -> str:
        return _scope_key(
            purpose=self.purpose,
            reviewer_id=self.reviewer_id,
            domain_id=self.domain_id,
            dimensions=[self.dimension],
            config_ids=self.config_ids,
            shots=(),
            seeds=None,
            backend="",
        )


SCHEDULE_BATCH = 200  # reviewers per transaction (keeps every IN list and transaction short)


def _db_now() -> datetime:
    """The database server's clock: run start times are taken from it too (judge_run_execute),
    so comparing the two never depends on two machines' clocks agreeing."""
    if connection.vendor == "postgresql":
        sql = "SELECT clock_timestamp()"
    elif connection.vendor == "sqlite":
        sql = "SELECT STRFTIME('%Y-%m-%d %H:%M:%f', 'NOW')"
    else:
        return timezone.now()
    with connection.cursor() as cur:
        cur.execute(sql)
        value = cur.fetchone()[0]
    if isinstance(value, str):
        value = datetime.fromisoformat(value).replace(tzinfo=UTC)
    return value


def judge_runs_schedule(
    *,
    reviewer_ids: Iterable[int],
    countdown: float | None = None,
    changed_at: datetime | None = None,
) -> dict[str, int]:
    """Queue the automatic judge runs these reviewers' histories call for (runs in a worker).

    For each (domain, dimension) where a reviewer has at least `min_history` scored ratings: a
    leave-one-out evaluation with every eligible active automatic configuration, and a prediction
    run over the domain's ideas they have not rated (personalized configurations, domains of
    their profile). A queued run for the scope is reused (it reads the ratings when it starts);
    a running one is marked for a rerun. Evaluations are sent before predictions so the
    alignment dashboard fills first.

    `changed_at` (when the ratings changed): a run of the scope that started after it has read
    those ratings already, so it needs neither a successor nor a rerun. Without this, a trigger
    that waited in the queue while its scope was judged would judge it again for nothing.

    Cost: per batch of reviewers one aggregate query for the histories, one for their profiles,
    one for their active runs, then bulk inserts; not one query per reviewer or scope.
    Returns counts: created, reused, rerun_requested, requeued.
    """
    judge_configs_ensure_defaults()
    summary = {"created": 0, "reused": 0, "rerun_requested": 0, "requeued": 0}
    configs = selectors.active_auto_configs()
    ids = sorted({int(i) for i in reviewer_ids})
    if not configs or not ids:
        return summary
    if countdown is None:
        countdown = float(getattr(settings, "JUDGE_DEBOUNCE_SECONDS", 30))
    domains = {d.id: d for d in Domain.objects.select_related("rubric")}
    known = {
        d_id: {dim.key for dim in selectors.dimensions_for_domain(d)} for d_id, d in domains.items()
    }
    for start in range(0, len(ids), SCHEDULE_BATCH):
        batch = ids[start : start + SCHEDULE_BATCH]
        counts = selectors.reviewers_history_counts(reviewer_ids=batch)
        profile_domains = selectors.reviewers_profile_domain_ids(reviewer_ids=batch)
        evaluations: list[_Wanted] = []
        predictions: list[_Wanted] = []
        for row in counts:
            reviewer_id, domain_id, dim = row["reviewer_id"], row["domain_id"], row["dimension"]
            if domain_id not in domains or dim not in known[domain_id]:
                continue  # a rating on a dimension outside the domain's rubric: nothing to judge
            eligible = [c for c in configs if row["n"] >= c.min_history]
            if not eligible:
                continue
            evaluations.append(
                _Wanted(
                    JudgeRun.Purpose.LOO_EVALUATION,
                    reviewer_id,
                    domain_id,
                    dim,
                    tuple(c.id for c in eligible),
                )
            )
            personal = [c.id for c in eligible if c.kind == JudgeConfig.Kind.PERSONALIZED]
            mine = profile_domains.get(reviewer_id, set())
            if personal and (not mine or domain_id in mine):
                predictions.append(
                    _Wanted(
                        JudgeRun.Purpose.PREDICTION, reviewer_id, domain_id, dim, tuple(personal)
                    )
                )
        for key, n in _runs_request_many(
            evaluations + predictions,
            reviewer_ids=batch,
            countdown=countdown,
            changed_at=changed_at,
        ).items():
            summary[key] += n
    if any(summary.values()):
        log.info("judge scheduling for %s reviewers: %s", len(ids), summary)
    return summary


@transaction.atomic
def _runs_request_many(
    wanted: list[_Wanted],
    *,
    reviewer_ids: list[int],
    countdown: float,
    changed_at: datetime | None = None,
) -> dict[str, int]:
    """`judge_run_request` for many automatic scopes at once, with the same invariants."""
    out = {"created": 0, "reused": 0, "rerun_requested": 0, "requeued": 0}
    if not wanted:
        return out
    read_already: set[str] = set()
    if changed_at is not None:
        read_already = set(
            JudgeRun.objects.filter(
                reviewer_id__in=reviewer_ids,
                purpose__in=[JudgeRun.Purpose.LOO_EVALUATION, JudgeRun.Purpose.PREDICTION],
                status__in=[JudgeRun.Status.RUNNING, JudgeRun.Status.DONE],
                started_at__gt=changed_at,
            ).values_list("scope_key", flat=True)
        )
    active = {
        r.scope_key: r
        for r in JudgeRun.objects.select_for_update().filter(
            reviewer_id__in=reviewer_ids,
            purpose__in=[JudgeRun.Purpose.LOO_EVALUATION, JudgeRun.Purpose.PREDICTION],
            status__in=JudgeRun.ACTIVE,
        )
    }
    rerun: list[int] = []
    resend: list[int] = []
    fresh: list[_Wanted] = []
    for w in wanted:
        run = active.get(w.key)
        if w.key in read_already and (run is None or run.status == JudgeRun.Status.RUNNING):
            out["reused"] += 1
        elif run is None:
            fresh.append(w)
        elif run.status == JudgeRun.Status.RUNNING:
            if not run.rerun_requested:
                rerun.append(run.id)
        elif _looks_lost(run, countdown):
            # Its message may have been lost (broker down at enqueue time): send it again. A
            # duplicate delivery is harmless, the claim and the run lock see to that.
            resend.append(run.id)
        else:
            out["reused"] += 1
    now = timezone.now()
    if rerun:
        JudgeRun.objects.filter(id__in=rerun).update(rerun_requested=True, updated_at=now)
    if resend:
        JudgeRun.objects.filter(id__in=resend).update(updated_at=now)
    out["rerun_requested"], out["requeued"] = len(rerun), len(resend)

    created: list[JudgeRun] = []
    if fresh:
        rows = [
            JudgeRun(
                purpose=w.purpose,
                reviewer_id=w.reviewer_id,
                domain_id=w.domain_id,
                dimensions=[w.dimension],
                shots=[],
                scope_key=w.key,
            )
            for w in fresh
        ]
        try:
            with transaction.atomic():
                created = JudgeRun.objects.bulk_create(rows, batch_size=500)
        except IntegrityError:
            # Another process queued one of these scopes meanwhile: fall back to one at a time,
            # which resolves each conflict the way judge_run_request always has.
            configs = {c.id: c for c in JudgeConfig.objects.filter(is_active=True)}
            reviewers = {u.id: u for u in User.objects.filter(id__in=reviewer_ids)}
            domains = {d.id: d for d in Domain.objects.filter(id__in={w.domain_id for w in fresh})}
            for w in fresh:
                _, made = judge_run_request(
                    purpose=w.purpose,
                    domain=domains[w.domain_id],
                    dimensions=[w.dimension],
                    configs=[configs[i] for i in w.config_ids if i in configs],
                    reviewer=reviewers[w.reviewer_id],
                    countdown=countdown,
                )
                out["created" if made else "reused"] += 1
            created = []
        else:
            if any(r.pk is None for r in created):  # no RETURNING on this database
                by_key = dict(
                    JudgeRun.objects.filter(
                        scope_key__in=[w.key for w in fresh], status=JudgeRun.Status.QUEUED
                    ).values_list("scope_key", "id")
                )
                for r in created:
                    r.pk = r.id = by_key[r.scope_key]
            through = JudgeRun.configs.through
            through.objects.bulk_create(
                [
                    through(judgerun_id=run.id, judgeconfig_id=config_id)
                    for run, w in zip(created, fresh, strict=True)
                    for config_id in w.config_ids
                ],
                batch_size=500,
            )
            JudgeHistory.objects.bulk_create(
                [
                    JudgeHistory(
                        event=JudgeHistory.Event.RUN_STATUS,
                        run_id=run.id,
                        new_value={"status": JudgeRun.Status.QUEUED},
                    )
                    for run in created
                ],
                batch_size=500,
            )
            out["created"] += len(created)
    # Evaluations were listed first, so their messages are sent (and, FIFO, executed) first.
    send = [r.id for r in created] + resend
    if send:
        transaction.on_commit(lambda: _enqueue_many(send, countdown))
    return out


def _enqueue_many(run_ids: list[int], countdown: float) -> None:
    for run_id in run_ids:
        try:
            _enqueue(run_id, countdown)
        except Exception:
            # Left queued: the next trigger for the scope sees it as lost and sends it again.
            log.exception("could not enqueue judge run %s", run_id)
            return


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
    countdown: float = 0,
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
        countdown=countdown,
    )


def judge_studies_ensure(
    *,
    dimension_keys: Sequence[str] = (),
    shots: Sequence[int] = tuple(DEFAULT_SHOTS),
    seeds: int = 3,
    min_history: int = 10,
    countdown: float = 0,
) -> list[JudgeRun]:
    """One study per domain with scored ratings and no study yet, with the default
    configurations and the full k sweep: what fills the alignment dashboard's alpha-against-k
    chart (paper 001, Figure 2) on a fresh installation such as the demo. Idempotent.

    One dimension per domain keeps it to a few minutes on the local baseline: the one with the
    most scored ratings among `dimension_keys` (any of the rubric when empty). Returns the runs
    started now.
    """
    from apps.screening.models import Rating

    judge_configs_ensure_defaults()
    defaults = (
        list(
            JudgeConfig.objects.filter(is_active=True, name__endswith="(default)").order_by("kind")
        )
        or selectors.active_auto_configs()
    )
    if not defaults:
        return []
    started: list[JudgeRun] = []
    studied = set(
        JudgeRun.objects.filter(purpose=JudgeRun.Purpose.STUDY).values_list("domain_id", flat=True)
    )
    for domain in Domain.objects.order_by("key"):
        if domain.id in studied:
            continue
        keys = [d.key for d in selectors.dimensions_for_domain(domain)]
        if dimension_keys:
            keys = [k for k in keys if k in set(dimension_keys)]
        counts = dict(
            Rating.objects.filter(
                status=Rating.Status.SCORED, idea__patent__domain=domain, dimension__key__in=keys
            )
            .values_list("dimension__key")
            .annotate(n=Count("id"))
            .order_by()
        )
        if not counts:
            continue
        dimension = max(keys, key=lambda k: (counts.get(k, 0), -keys.index(k)))
        run, created = judge_study_start(
            by=None,
            domain=domain,
            dimensions=[dimension],
            configs=defaults,
            shots=shots,
            seeds=seeds,
            min_history=min_history,
            countdown=countdown,
        )
        if created:
            started.append(run)
    return started


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
    """Exclusive hold on one run for this process; released on exit or when the process dies.

    PostgreSQL: a session advisory lock (freed by the server when the worker's connection drops).
    Other databases (the local SQLite demo, one machine): an flock on a file next to the
    database, which the kernel frees when the holder dies, the same guarantee.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("SELECT pg_try_advisory_lock(%s, %s)", [ADVISORY_LOCK_CLASS, run_id])
            got = bool(cur.fetchone()[0])
        try:
            yield got
        finally:
            if got:
                with connection.cursor() as cur:
                    cur.execute("SELECT pg_advisory_unlock(%s, %s)", [ADVISORY_LOCK_CLASS, run_id])
        return
    with _file_lock(_lock_path(run_id)) as got:
        yield got


def _lock_path(run_id: int) -> Path:
    """One lock file per run, in a directory named after the database so two databases on the
    same machine (the demo, a test) never share locks."""
    db = str(connection.settings_dict.get("NAME") or "default")
    base = Path(getattr(settings, "VAR_DIR", "") or tempfile.gettempdir())
    digest = hashlib.sha256(db.encode()).hexdigest()[:12]
    return base / "locks" / f"judges-{digest}" / f"run-{run_id}.lock"


@contextmanager
def _file_lock(path: Path) -> Iterator[bool]:
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the status claim alone guards the run
        yield True
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


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
        # The contract with the alignment snapshots (the runs branch's execution module makes
        # the same call; at merge keep that one).
        transaction.on_commit(lambda: alignment_runs_finished(run_ids=[run.id]))
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
            # The database's clock, like changed_at in scheduling: one clock, no skew.
            status=JudgeRun.Status.RUNNING,
            started_at=Now(),
            updated_at=timezone.now(),
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
