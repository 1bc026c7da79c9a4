"""Judge runs: request (one active run per scope), studies, cancel.

Invariants
- At most one queued/running run per scope (partial unique constraint on scope_key): re-triggers
  return the existing run; a re-trigger while it runs sets `rerun_requested`, and a fresh run
  follows when it finishes (the later run supersedes the earlier one on every page).
- A run whose worker died (running, heartbeat older than JUDGE_LEASE_SECONDS) is sent again when
  someone asks for its scope, as the reclaim job would: asking again never just returns a stuck
  run. It resumes from its stored plan (services.execution).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.core.errors import ApplicationError, FieldError, NotFound, PermissionDenied
from apps.core.leases import lease_expired_before
from apps.judges import selectors
from apps.judges.models import JudgeConfig, JudgeHistory, JudgeRun
from apps.judges.services import alignment, dispatch
from apps.judges.services.configs import (
    BOUNDS,
    DEFAULT_SHOTS,
    config_cannot_run,
    judge_configs_ensure_defaults,
)
from apps.screening.models import Rating

# Production uses both signals of the offline judge; a study may ask for the text alone.
DEFAULT_SIGNALS = "panel,text"


def scope_key(
    *,
    purpose: str,
    reviewer_id: int | None,
    domain_id: int,
    dimensions: Sequence[str],
    config_ids: Sequence[int],
    shots: Sequence[int],
    seeds: int | None,
    backend: str,
    signals: str = DEFAULT_SIGNALS,
) -> str:
    if purpose in JudgeRun.AUTOMATIC:
        # Automatic runs: one per reviewer, domain and set of dimensions whatever the
        # configuration mix (a later run covering a dimension supersedes earlier ones on it:
        # selectors.runs.current_run_ids).
        return f"{purpose}:r{reviewer_id}:d{domain_id}:{','.join(sorted(dimensions))}"
    return (
        f"{purpose}:d{domain_id}:{','.join(sorted(dimensions))}"
        f":c{','.join(map(str, sorted(config_ids)))}"
        f":k{','.join(map(str, sorted(shots)))}:s{seeds or ''}:b{backend}"
        + ("" if signals == DEFAULT_SIGNALS else f":g{signals}")
    )


def parse_signals(value: str) -> str:
    """'panel,text' (the default, as in production) or 'text' (the text-only judge); the
    order does not matter. Raises ApplicationError naming the field and value otherwise."""
    chosen = {v.strip() for v in str(value).split(",") if v.strip()}
    if chosen == {"panel", "text"}:
        return DEFAULT_SIGNALS
    if chosen == {"text"}:
        return "text"
    raise ApplicationError(
        "The study was not started.",
        errors=[FieldError("signals", "give panel,text (the default) or text", value=str(value))],
    )


def history_status(
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


def looks_lost(run: JudgeRun, countdown: float = 0) -> bool:
    """A queued run no worker took within JUDGE_REQUEUE_AFTER_SECONDS (plus its countdown), or a
    running one whose heartbeat is stale: its message or its worker is gone."""
    if run.status == JudgeRun.Status.RUNNING:
        beat = run.heartbeat_at or run.updated_at
        return beat < lease_expired_before()
    grace = float(settings.JUDGE_REQUEUE_AFTER_SECONDS) + countdown
    return (timezone.now() - run.updated_at).total_seconds() > grace


def _validate_scope(
    *, domain: Domain, dimensions: Sequence[str], configs: Sequence[JudgeConfig], backend: str
) -> None:
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
    signals: str = DEFAULT_SIGNALS,
) -> tuple[JudgeRun, bool]:
    """Queue a run for this scope unless one is already queued or running; (run, created).

    Enqueues the Celery task after commit (with `countdown` as the debounce delay). An existing
    run that looks lost (see `looks_lost`) is sent again, so it resumes.
    """
    _validate_scope(domain=domain, dimensions=dimensions, configs=configs, backend=backend)
    key = scope_key(
        purpose=purpose,
        reviewer_id=reviewer.id if reviewer else None,
        domain_id=domain.id,
        dimensions=dimensions,
        config_ids=[c.id for c in configs],
        shots=shots,
        seeds=seeds,
        backend=backend,
        signals=signals,
    )
    existing = (
        JudgeRun.objects.select_for_update()
        .filter(scope_key=key, status__in=JudgeRun.ACTIVE)
        .first()
    )
    if existing is not None:
        lost = enqueue and looks_lost(existing, countdown)
        if existing.status == JudgeRun.Status.RUNNING and purpose != JudgeRun.Purpose.STUDY:
            existing.rerun_requested = True
            existing.save(update_fields=["rerun_requested", "updated_at"])
        if lost:
            # A dead worker's run, or a lost message: send it again (it resumes from its plan).
            # The heartbeat is reset so the reclaim job does not send it a second time at once.
            JudgeRun.objects.filter(id=existing.id).update(
                heartbeat_at=timezone.now(), updated_at=timezone.now()
            )
            run_id = existing.id
            transaction.on_commit(lambda: dispatch.send_runs([run_id]))
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
                signals=signals,
                scope_key=key,
                requested_by=requested_by,
            )
    except IntegrityError:  # another process queued the same scope between our read and insert
        return JudgeRun.objects.get(scope_key=key, status__in=JudgeRun.ACTIVE), False
    run.configs.set(configs)
    history_status(run, "", JudgeRun.Status.QUEUED, by=requested_by)
    if enqueue:
        transaction.on_commit(lambda: dispatch.send_run(run.id, countdown=countdown))
    return run, True


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
    signals: str = DEFAULT_SIGNALS,
) -> tuple[JudgeRun, bool]:
    """An admin's study: every reviewer with enough history, leave-one-out, chosen k and seeds."""
    if by is not None and not by.is_admin:
        raise PermissionDenied("Only admins start judge studies.")
    errors = []
    low, high = BOUNDS["seeds"]
    if not low <= seeds <= high:
        errors.append(
            FieldError("seeds", f"must be between {int(low)} and {int(high)}", value=str(seeds))
        )
    low, high = BOUNDS["shots"]
    if not shots or any(not low <= int(k) <= high for k in shots):
        errors.append(
            FieldError(
                "shots",
                f"give one or more k between {int(low)} and {int(high)}",
                value=",".join(map(str, shots)),
            )
        )
    low, high = BOUNDS["min_history"]
    if not low <= min_history <= high:
        errors.append(
            FieldError(
                "min_history",
                f"must be between {int(low)} and {int(high)}",
                value=str(min_history),
            )
        )
    for config in configs:
        reason = config_cannot_run(config, backend=backend)
        if reason:
            errors.append(FieldError("configs", f"{config.name!r} cannot run: {reason}"))
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
        signals=signals,
    )


def judge_studies_ensure(
    *,
    dimension_keys: Sequence[str] = (),
    shots: Sequence[int] = tuple(DEFAULT_SHOTS),
    seeds: int = 3,
    min_history: int = 10,
    countdown: float = 0,
    all_dimensions: bool = False,
) -> list[JudgeRun]:
    """One study per domain with scored ratings and no study yet, with the default
    configurations and the full k sweep: what fills the alignment dashboard's alpha-against-k
    chart (paper 001, Figure 2) on a fresh installation such as the demo. Idempotent.

    By default one dimension per domain: the one with the most scored ratings among
    `dimension_keys` (any of the rubric when empty); `all_dimensions` studies every one of them
    (the local judge does a domain in seconds). Returns the runs started now.
    """
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
        if all_dimensions:
            chosen = [k for k in keys if counts.get(k)]
        else:
            chosen = [max(keys, key=lambda k: (counts.get(k, 0), -keys.index(k)))]
        run, created = judge_study_start(
            by=None,
            domain=domain,
            dimensions=chosen,
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
    """Stop a queued or running run; the executor checks the status between batches."""
    old = run.status
    n = JudgeRun.objects.filter(id=run.id, status__in=JudgeRun.ACTIVE).update(
        status=JudgeRun.Status.CANCELLED, finished_at=timezone.now(), updated_at=timezone.now()
    )
    if not n:
        raise ApplicationError(
            f"Run {run.id} is {run.get_status_display().lower()}; only queued or "
            "running runs can be cancelled."
        )
    history_status(run, old, JudgeRun.Status.CANCELLED, by=by)
    transaction.on_commit(lambda: alignment.alignment_after_run(run))
    run.refresh_from_db()
    return run


def judge_run_get(*, run_id: int) -> JudgeRun:
    run = JudgeRun.objects.filter(id=run_id).first()
    if run is None:
        raise NotFound(f"Judge run {run_id} does not exist.")
    return run
