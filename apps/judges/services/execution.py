"""Executing judge runs: plan once, judge in chunks under leases, calibrate, vote, finish.

Invariants
- A run's plan (targets, example pool, configurations) is computed once, when the run is
  claimed, and stored (JudgeRunPlan) with its chunks (JudgeRunChunk) in the same transaction;
  a resumed run, and every worker helping with it, executes that plan, never newer ratings.
- The run lock is a lease, the same on every database: a worker works on a chunk only while it
  holds the chunk's lease (status RUNNING, its token, a heartbeat fresher than
  JUDGE_LEASE_SECONDS), taken by a conditional UPDATE and renewed between batches. A dead
  worker's chunk is taken over by the next worker that asks, and the reclaim job
  (services.scheduling.judge_runs_reclaim) sends the run again when nobody is working on it.
- Per-seed predictions are upserted under (run, reviewer, idea, dimension, kind, k, seed) and
  the executor skips units that already have one: a retried or duplicated task finishes the
  run, with no duplicates.
- Progress and cost are recomputed from the stored predictions, never incremented, so a
  resumed run does not count a call twice.
- The run is finished (finals voted, status DONE) by whichever worker finds every chunk done;
  the finals are upserted and the status change is conditional, so two finishers agree.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, Sum
from django.db.models.functions import Now
from django.utils import timezone

from apps.accounts.models import User
from apps.core.errors import ApplicationError
from apps.decisions.services import decisions_mark_stale
from apps.judges import selectors
from apps.judges.backends import get_backend
from apps.judges.engine import shortlist
from apps.judges.engine.calibration import Calibration, cross_fit_confidence, fit_calibration
from apps.judges.engine.judgment import (
    Example,
    JudgeRequest,
    PermanentBackendError,
    RubricDimension,
    TransientBackendError,
    judge_many,
)
from apps.judges.engine.panel import PanelIndex, level_only, tolerance
from apps.judges.engine.postprocess import aggregate_seeds
from apps.judges.engine.prompting import idea_text, patent_text, rubric_wording
from apps.judges.models import (
    JudgeCalibration,
    JudgeConfig,
    JudgeFinal,
    JudgePrediction,
    JudgeRun,
    JudgeRunChunk,
    JudgeRunPlan,
    JudgeShortlist,
)
from apps.judges.services import alignment, dispatch, planning
from apps.judges.services.configs import base_url_error
from apps.judges.services.runs import history_status, judge_run_request, lease_expired_before
from apps.judges.vectors import item_vectors
from apps.screening.models import Dimension

log = logging.getLogger(__name__)

# Local judge: units judged (and stored) per batch. Large, because the local backend is
# vectorised; small enough that progress moves and a cancel is noticed within seconds.
LOCAL_BATCH = 5000
# LLM: calls per batch = the configuration's concurrency x this; the lease is renewed between
# batches, so a batch must stay well under JUDGE_LEASE_SECONDS.
LLM_ROUNDS_PER_BATCH = 2
PROGRESS_EVERY_SECONDS = 1.0
# A shortlist comes from the personalized judge when there is one (the reviewer's own scale),
# else aggregate, else zero-shot.
SHORTLIST_KINDS = ("personalized", "aggregate", "zero_shot")
# Calibrated confidences of up to this many rows are written in one statement (bulk_update);
# more, with one UPDATE per distinct value (at most 101).
SMALL_UPDATE = 500


class RunDeferred(Exception):
    """The backend is temporarily unavailable; the task should retry the run later."""


class LeaseLost(Exception):
    """Another worker took this chunk over (ours looked dead), or the run was stopped."""


# --------------------------------------------------------------------------- planning (storage)


def _config_specs(run: JudgeRun) -> list[planning.ConfigSpec]:
    specs = []
    for config in run.configs.order_by("kind", "id"):
        specs.append(
            planning.ConfigSpec(
                id=config.id,
                kind=config.kind,
                k_values=tuple(
                    planning.k_values(
                        purpose=run.purpose,
                        run_shots=run.shots or [],
                        kind=config.kind,
                        config_k=config.k_values,
                    )
                ),
                seeds=int(run.seeds or config.seeds),
                backend=run.backend or config.backend,
            )
        )
    return specs


def _snapshot(run: JudgeRun, dims: list[Dimension], specs: list[planning.ConfigSpec]) -> dict:
    pool: dict[str, list[list[int]]] = {}
    targets: dict[str, list[list[int]]] = {}
    for dim in dims:
        frame = selectors.rating_pool_frame(domain=run.domain, dimension_ids=[dim.id])
        rows = (
            frame[["rating_id", "idea_id", "patent_id", "reviewer_id", "score"]]
            .astype(int)
            .values.tolist()
        )
        pool[str(dim.id)] = rows
        if run.purpose == JudgeRun.Purpose.PREDICTION:
            # A prediction run is always for one reviewer.
            reviewer_id = cast(int, run.reviewer_id)
            ideas = selectors.idea_rows(
                selectors.reviewer_unrated_idea_ids(reviewer_id=reviewer_id, domain=run.domain)
            )
            targets[str(dim.id)] = sorted(
                [reviewer_id, i, idea.patent_id] for i, idea in ideas.items()
            )
        elif run.purpose == JudgeRun.Purpose.LOO_EVALUATION:
            targets[str(dim.id)] = planning.leave_one_out_targets(
                rows, reviewer_id=run.reviewer_id, min_history=1
            )
        else:
            configs = run.configs.all()
            min_history = run.min_history or min(c.min_history for c in configs)
            targets[str(dim.id)] = planning.leave_one_out_targets(
                rows, reviewer_id=None, min_history=min_history
            )
    return {"pool": pool, "targets": targets, "configs": [s.to_dict() for s in specs]}


@dataclass
class _Plan:
    dims: dict[int, Dimension]
    pools: dict[int, list[list[int]]]
    specs: dict[int, planning.ConfigSpec]
    units: list[planning.WorkUnit]


def _load_plan(run: JudgeRun, stored: JudgeRunPlan) -> _Plan:
    dims = {d.id: d for d in selectors.dimensions_for_domain(run.domain, run.dimensions)}
    pools = {int(k): v for k, v in stored.pool.items()}
    targets = {int(k): v for k, v in stored.targets.items()}
    specs = [planning.ConfigSpec.from_dict(d) for d in stored.configs]
    units = planning.plan_units(
        dimension_ids=[d for d in dims if d in targets], targets=targets, configs=specs
    )
    return _Plan(dims=dims, pools=pools, specs={s.id: s for s in specs}, units=units)


def _ensure_plan(run: JudgeRun) -> _Plan:
    """The run's stored plan, made (with its chunks) by the first worker that gets here."""
    stored = JudgeRunPlan.objects.filter(run_id=run.id).first()
    if stored is not None:
        return _load_plan(run, stored)
    dims = selectors.dimensions_for_domain(run.domain, run.dimensions)
    if not dims:
        raise ApplicationError(f"No dimensions {run.dimensions} in the rubric of {run.domain.key}.")
    specs = _config_specs(run)
    snapshot = _snapshot(run, dims, specs)
    stored = JudgeRunPlan(run=run, **snapshot)
    plan = _load_plan(run, stored)
    bounds = planning.chunk_bounds(
        plan.units,
        {s.id: s.backend for s in specs},
        int(settings.JUDGE_LLM_CHUNK_CALLS),
    )
    stored.units = len(plan.units)
    try:
        with transaction.atomic():
            stored.save(force_insert=True)
            JudgeRunChunk.objects.bulk_create(
                [
                    JudgeRunChunk(run=run, index=i, start=start, stop=stop)
                    for i, (start, stop) in enumerate(bounds)
                ]
            )
            JudgeRun.objects.filter(id=run.id).update(total=len(plan.units))
    except IntegrityError:  # another worker planned it first: use theirs
        return _load_plan(run, JudgeRunPlan.objects.get(run_id=run.id))
    if len(bounds) > 1 and any(s.backend != JudgeConfig.Backend.LOCAL for s in specs):
        # Other workers may help: one message per further chunk (each claims what is free).
        transaction.on_commit(lambda: dispatch.send_chunks(run.id, list(range(1, len(bounds)))))
    return plan


# --------------------------------------------------------------------------- leases


def _claim_chunk(chunk_id: int, token: str) -> bool:
    """Take a chunk that is pending, or whose holder stopped heartbeating (died)."""
    return bool(
        JudgeRunChunk.objects.filter(id=chunk_id)
        .filter(
            Q(status=JudgeRunChunk.Status.PENDING)
            | Q(status=JudgeRunChunk.Status.RUNNING, heartbeat_at__lt=lease_expired_before())
            | Q(status=JudgeRunChunk.Status.RUNNING, heartbeat_at__isnull=True)
        )
        .update(status=JudgeRunChunk.Status.RUNNING, lease_token=token, heartbeat_at=Now())
    )


def _beat(run_id: int, chunk_id: int, token: str) -> None:
    """Renew the lease; raise LeaseLost when the chunk was taken over or the run stopped."""
    held = JudgeRunChunk.objects.filter(
        id=chunk_id, lease_token=token, status=JudgeRunChunk.Status.RUNNING
    ).update(heartbeat_at=Now())
    running = JudgeRun.objects.filter(id=run_id, status=JudgeRun.Status.RUNNING).update(
        heartbeat_at=Now()
    )
    if not held or not running:
        raise LeaseLost(f"chunk {chunk_id} of run {run_id}")


# --------------------------------------------------------------------------- judging


class _Texts:
    """Renders patents and ideas once per run, the way the prompt module expects them."""

    def __init__(self, idea_ids: Iterable[int]) -> None:
        self._cache: dict[int, tuple[str, str]] = {}
        for idea_id, idea in selectors.idea_rows(set(idea_ids)).items():
            p = idea.patent
            self._cache[idea_id] = (
                patent_text(p.title, p.abstract, p.claims),
                idea_text(idea.title, idea.description, idea.implementation, idea.differentiation),
            )

    def __getitem__(self, idea_id: int) -> tuple[str, str]:
        return self._cache[idea_id]


def _rubric_dimension(dim: Dimension) -> RubricDimension:
    return RubricDimension(
        key=dim.key,
        name=dim.name,
        description=dim.description,
        scale_min=dim.scale_min,
        scale_max=dim.scale_max,
        levels={int(k): str(v) for k, v in (dim.levels or {}).items()},
        categories=tuple(int(c) for c in (dim.categories or [])),
        wording=rubric_wording(dim.rubric),
    )


class _Executor:
    """What one worker needs to judge units of one run: texts, backends, examples."""

    def __init__(self, run: JudgeRun, plan: _Plan) -> None:
        self.run = run
        self.plan = plan
        idea_ids = {u.idea_id for u in plan.units} | {
            int(r[1]) for rows in plan.pools.values() for r in rows
        }
        self.idea_ids = sorted(idea_ids)
        self.texts = _Texts(idea_ids)
        self.rating = {
            int(r[0]): (int(r[1]), int(r[4])) for rows in plan.pools.values() for r in rows
        }
        self.rubric = {d_id: _rubric_dimension(d) for d_id, d in plan.dims.items()}
        # The panel signal: who else scored each idea, per dimension (engine.panel). Only for
        # the offline judge, and only when the run uses it (a text-only study does not).
        self.panels: dict[int, PanelIndex] = {}
        if "panel" in (run.signals or "").split(","):
            for d_id, rows in plan.pools.items():
                if d_id not in self.rubric:
                    continue
                d = self.rubric[d_id]
                self.panels[d_id] = PanelIndex(
                    ((int(r[1]), int(r[3]), int(r[4])) for r in rows),
                    scale_min=d.scale_min,
                    scale_max=d.scale_max,
                    categories=d.categories,
                )
        self.configs = {c.id: c for c in JudgeConfig.objects.filter(id__in=plan.specs)}
        self._backends: dict[str, tuple[Any, str]] = {}
        self.calibrations = (
            _stored_calibrations(run) if run.purpose == JudgeRun.Purpose.PREDICTION else {}
        )

    def backend(self, spec: planning.ConfigSpec) -> tuple[Any, str]:
        """(backend, model) of a configuration; one local backend per run, vectors loaded once."""
        config = self.configs.get(spec.id)
        if spec.backend == JudgeConfig.Backend.LOCAL:
            if "local" not in self._backends:
                backend = get_backend("local", vectors=item_vectors(self.idea_ids))
                self._backends["local"] = (backend, getattr(backend, "model", "") or "")
            return self._backends["local"]
        base_url = config.base_url if config else ""
        key = f"openai:{spec.id}"
        if key in self._backends:
            return self._backends[key]
        if not (base_url or settings.LLM_BASE_URL):
            name = config.name if config else spec.id
            raise ApplicationError(
                f"Configuration {name!r} uses the openai backend but no endpoint is set: "
                "set LLM_BASE_URL or the configuration's base_url."
            )
        problem = base_url_error(base_url)
        if problem:  # the allowlist changed since the configuration was saved
            raise ApplicationError(f"base_url {base_url!r} {problem}.")
        model = (config.model if config else "") or settings.LLM_MODEL
        options: dict[str, Any] = {
            "model": model,
            "max_retries": settings.LLM_MAX_RETRIES,
        }
        if base_url:
            options["base_url"] = base_url
        self._backends[key] = (get_backend("openai", **options), model)
        return self._backends[key]

    def requests(self, units: Sequence[planning.WorkUnit]) -> list[JudgeRequest]:
        examples = planning.examples_for_units(units, self.plan.pools)
        out = []
        for u, ids in zip(units, examples, strict=True):
            config = self.configs.get(u.config_id)
            patent, idea = self.texts[u.idea_id]
            index = self.panels.get(u.dimension_id)
            local = self.plan.specs[u.config_id].backend == JudgeConfig.Backend.LOCAL
            # Never the target reviewer's own scores: the panel leaves them out.
            panel = (
                index.panel(u.idea_id, exclude_reviewer=u.reviewer_id)
                if index is not None and local
                else ()
            )
            out.append(
                JudgeRequest(
                    dimension=self.rubric[u.dimension_id],
                    examples=tuple(
                        Example(
                            item_id=rid,
                            patent_text=self.texts[self.rating[rid][0]][0],
                            idea_text=self.texts[self.rating[rid][0]][1],
                            score=self.rating[rid][1],
                            idea_id=self.rating[rid][0],
                        )
                        for rid in ids
                    ),
                    patent_text=patent,
                    idea_text=idea,
                    seed=u.seed,
                    model=self.backend(self.plan.specs[u.config_id])[1],
                    temperature=config.temperature if config else 0.0,
                    idea_id=u.idea_id,
                    panel=panel,
                )
            )
        return out

    def judge(self, spec: planning.ConfigSpec, requests: list[JudgeRequest]) -> list[Any]:
        backend, _ = self.backend(spec)
        if spec.backend == JudgeConfig.Backend.LOCAL:
            batch = getattr(backend, "judge_batch", None)
            if callable(batch):
                return list(batch(requests))
            return [backend.judge(r) for r in requests]
        config = self.configs.get(spec.id)
        return judge_many(backend, requests, concurrency=config.concurrency if config else 1)

    def store(
        self,
        spec: planning.ConfigSpec,
        units: Sequence[planning.WorkUnit],
        requests: Sequence[JudgeRequest],
        replies: Sequence[Any],
    ) -> None:
        backend, model = self.backend(spec)
        calibration = (
            self.calibrations.get(
                (self.plan.dims[units[0].dimension_id].key, spec.kind, spec.backend)
            )
            if units
            else None
        )
        raw = [r.confidence for r in replies]
        calibrated: list[int | None] = list(raw)
        if calibration is not None:
            known = [i for i, c in enumerate(raw) if c is not None]
            if known:
                values = calibration.apply(np.array([raw[i] for i in known], dtype=float))
                for i, v in zip(known, values, strict=True):
                    calibrated[i] = int(v)
        rows = [
            JudgePrediction(
                run_id=self.run.id,
                config_id=u.config_id if u.config_id in self.configs else None,
                kind=u.kind,
                k=u.k,
                seed=u.seed,
                reviewer_id=u.reviewer_id,
                idea_id=u.idea_id,
                dimension_id=u.dimension_id,
                score=reply.score if not reply.error else None,
                reason=reply.reason or "",
                confidence=conf,
                raw_confidence=reply.confidence,
                signal=getattr(reply, "signal", "") or "",
                panel_size=getattr(reply, "panel_size", 0) or 0,
                level_score=level_only([e.score for e in request.examples]),
                model=reply.model or model,
                backend=backend.name,
                response_mode=getattr(reply, "response_mode", "") or "",
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
            for u, request, reply, conf in zip(units, requests, replies, calibrated, strict=True)
        ]
        JudgePrediction.objects.bulk_create(
            rows,
            batch_size=1000,
            update_conflicts=True,
            unique_fields=["run", "reviewer", "idea", "dimension", "kind", "k", "seed"],
            update_fields=[
                "config",
                "score",
                "reason",
                "confidence",
                "raw_confidence",
                "signal",
                "panel_size",
                "level_score",
                "model",
                "backend",
                "response_mode",
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


def _stored_calibrations(run: JudgeRun) -> dict[tuple[str, str, str], Calibration]:
    """The fits of this run's domain, by (dimension key, kind, backend)."""
    return {
        (c.dimension, c.kind, c.backend): Calibration.from_dict(c.fit)
        for c in JudgeCalibration.objects.filter(
            domain_id=run.domain_id, dimension__in=run.dimensions
        )
    }


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
    price_in = Decimal(str(settings.LLM_PRICE_IN_PER_MTOK))
    price_out = Decimal(str(settings.LLM_PRICE_OUT_PER_MTOK))
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


def _work_chunk(ex: _Executor, chunk: JudgeRunChunk, token: str, stored: set[tuple]) -> None:
    """Judge the chunk's units that have no stored prediction, batch by batch."""
    units = [u for u in ex.plan.units[chunk.start : chunk.stop] if u.key not in stored]
    last_progress = time.monotonic()
    position = 0
    while position < len(units):
        spec = ex.plan.specs[units[position].config_id]
        if spec.backend == JudgeConfig.Backend.LOCAL:
            size = LOCAL_BATCH
        else:
            config = ex.configs.get(spec.id)
            size = max(1, (config.concurrency if config else 1) * LLM_ROUNDS_PER_BATCH)
        batch = units[position : position + size]
        position += len(batch)
        requests = ex.requests(batch)
        replies = ex.judge(spec, requests)
        _beat(ex.run.id, chunk.id, token)  # before storing: a taken-over chunk stores nothing
        ex.store(spec, batch, requests, replies)
        if time.monotonic() - last_progress >= PROGRESS_EVERY_SECONDS:
            _refresh_progress(ex.run.id)
            last_progress = time.monotonic()
    JudgeRunChunk.objects.filter(id=chunk.id, lease_token=token).update(
        status=JudgeRunChunk.Status.DONE, heartbeat_at=Now()
    )


def _work(run: JudgeRun, plan: _Plan, token: str) -> bool:
    """Claim and judge every chunk this worker can get; True when every chunk is done."""
    ex: _Executor | None = None
    stored: set[tuple] | None = None
    for chunk in JudgeRunChunk.objects.filter(run_id=run.id).order_by("index"):
        if chunk.status == JudgeRunChunk.Status.DONE or not _claim_chunk(chunk.id, token):
            continue
        if ex is None:
            ex = _Executor(run, plan)
        if stored is None:
            stored = set(
                JudgePrediction.objects.filter(run_id=run.id).values_list(
                    "reviewer_id", "idea_id", "dimension_id", "kind", "k", "seed"
                )
            )
        _beat(run.id, chunk.id, token)
        _work_chunk(ex, chunk, token, stored)
    _refresh_progress(run.id)
    return (
        not JudgeRunChunk.objects.filter(run_id=run.id)
        .exclude(status=JudgeRunChunk.Status.DONE)
        .exists()
    )


# --------------------------------------------------------------------------- finishing


def _calibrate(run: JudgeRun, plan: _Plan) -> None:
    """Leave-one-out runs: calibrate each seed's confidence empirically, cross-fitted by
    reviewer (a reviewer's confidences come from a fit that did not see them), and store the
    fit per (domain, dimension, kind, backend) for later prediction runs of that scope.

    Only rows whose calibrated confidence differs are written (see SMALL_UPDATE), with the same
    statements on every database."""
    truth = {
        (int(r[3]), int(r[1]), dim_id): int(r[4])
        for dim_id, rows in plan.pools.items()
        for r in rows
    }
    backend_of = {s.id: s.backend for s in plan.specs.values()}
    # Right = within the scale's tolerance (exact on coarse scales; engine.panel.tolerance).
    tolerances = {d_id: tolerance(d.scale_min, d.scale_max) for d_id, d in plan.dims.items()}
    # (prediction id, reviewer id, raw confidence, correct, stored confidence) per scope.
    groups: dict[tuple[int, str, str], list[tuple[int, int, float, bool, int | None]]] = (
        defaultdict(list)
    )
    rows = JudgePrediction.objects.filter(run_id=run.id, score__isnull=False).values_list(
        "id",
        "reviewer_id",
        "idea_id",
        "dimension_id",
        "kind",
        "config_id",
        "score",
        "raw_confidence",
        "confidence",
    )
    for pid, reviewer, idea, dim_id, kind, config_id, score, raw_conf, current in rows:
        if raw_conf is None or (reviewer, idea, dim_id) not in truth:
            continue
        backend = backend_of.get(config_id, JudgeConfig.Backend.LOCAL)
        is_correct = abs(truth[(reviewer, idea, dim_id)] - cast(int, score)) <= tolerances[dim_id]
        groups[(dim_id, kind, backend)].append((pid, reviewer, raw_conf, is_correct, current))
    changed: dict[int, list[int]] = defaultdict(list)
    for (dim_id, kind, backend), items in groups.items():
        raw = np.array([i[2] for i in items], dtype=float)
        correct = np.array([i[3] for i in items], dtype=bool)
        reviewers = np.array([i[1] for i in items])
        calibrated = cross_fit_confidence(raw, correct, reviewers)
        for item, value in zip(items, calibrated, strict=True):
            if item[4] != int(value):
                changed[int(value)].append(item[0])
        fit = fit_calibration(raw, correct)
        scope: dict[str, Any] = {
            "domain_id": run.domain_id,
            "dimension": plan.dims[dim_id].key,
            "kind": kind,
            "backend": backend,
        }
        # A fit on more predictions (a study) is not replaced by one on fewer (one reviewer's
        # evaluation); equal or larger ones replace it, so it follows the newer ratings.
        stored_n = JudgeCalibration.objects.filter(**scope).values_list("n", flat=True).first()
        if stored_n is None or len(items) >= stored_n:
            try:
                with transaction.atomic():
                    JudgeCalibration.objects.update_or_create(
                        **scope, defaults={"fit": fit.to_dict(), "n": len(items), "run": run}
                    )
            except IntegrityError:  # another run of the scope stored its fit at the same moment
                pass
    n_changed = sum(len(ids) for ids in changed.values())
    if n_changed <= SMALL_UPDATE:
        JudgePrediction.objects.bulk_update(
            [
                JudgePrediction(id=pid, confidence=value)
                for value, ids in changed.items()
                for pid in ids
            ],
            ["confidence"],
            batch_size=SMALL_UPDATE,
        )
        return
    for value, ids in changed.items():
        for start in range(0, len(ids), 5000):
            JudgePrediction.objects.filter(id__in=ids[start : start + 5000]).update(
                confidence=value
            )


def _finalize(run: JudgeRun) -> None:
    """Majority vote over each target's kept seeds (postprocess.aggregate_seeds); upserted."""
    thresholds = dict(
        JudgeConfig.objects.filter(runs=run).values_list("id", "confidence_threshold")
    )
    groups: dict[tuple[int, int, int, str, int], list[tuple]] = defaultdict(list)
    rows = (
        JudgePrediction.objects.filter(run_id=run.id)
        .order_by("seed")
        .values_list(
            "reviewer_id",
            "idea_id",
            "dimension_id",
            "kind",
            "k",
            "config_id",
            "score",
            "confidence",
            "reason",
            "signal",
            "panel_size",
            "level_score",
        )
    )
    for reviewer, idea, dim_id, kind, k, config_id, score, confidence, reason, *more in rows:
        groups[(reviewer, idea, dim_id, kind, k)].append(
            (config_id, score, confidence, reason, *more)
        )
    finals = []
    for (reviewer_id, idea_id, dimension_id, kind, k), preds in groups.items():
        threshold = thresholds.get(preds[0][0], 80)
        final = aggregate_seeds([(p[1], p[2]) for p in preds], threshold=threshold)
        voters = [
            p
            for p in preds
            if p[1] is not None and p[1] == final.score and (p[2] or 0) >= threshold
        ]
        voters.sort(key=lambda p: -(p[2] or 0))
        # The reason shown (case view, reasoning similarity): a kept vote for the final score, or,
        # when every seed was discarded, the most confident scored reply, so the text is not lost.
        scored = sorted((p for p in preds if p[1] is not None), key=lambda p: -(p[2] or 0))
        reason = voters[0][3] if voters else (scored[0][3] if scored else "")
        source = voters[0] if voters else (scored[0] if scored else None)
        levels = [p[6] for p in preds if p[6] is not None]
        finals.append(
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
                confidence=final.confidence,
                reason=reason,
                signal=source[4] if source else "",
                panel_size=source[5] if source else 0,
                level_score=level_only(levels),
            )
        )
    JudgeFinal.objects.bulk_create(
        finals,
        batch_size=1000,
        update_conflicts=True,
        unique_fields=["run", "reviewer", "idea", "dimension", "kind", "k"],
        update_fields=[
            "score",
            "kept",
            "discarded",
            "failed",
            "confidence",
            "reason",
            "signal",
            "panel_size",
            "level_score",
        ],
    )
    if run.purpose == JudgeRun.Purpose.PREDICTION:
        _store_shortlist(run, finals)


def _shortlist_candidates(
    finals: Iterable[JudgeFinal], dims: dict[int, Dimension]
) -> list[shortlist.Candidate]:
    """The finals a shortlist ranks: per dimension, the first kind of SHORTLIST_KINDS present,
    at its largest k."""
    by_dim: dict[int, list[JudgeFinal]] = defaultdict(list)
    for f in finals:
        if f.dimension_id in dims:
            by_dim[f.dimension_id].append(f)
    out = []
    for dimension_id, rows in by_dim.items():
        kinds = {f.kind for f in rows}
        kind = next((k for k in SHORTLIST_KINDS if k in kinds), None)
        top_k = max((f.k for f in rows if f.kind == kind), default=0)
        d = dims[dimension_id]
        out += [
            shortlist.Candidate(
                idea_id=f.idea_id,
                dimension_id=f.dimension_id,
                score=f.score,
                confidence=f.confidence,
                signal=f.signal,
                panel_size=f.panel_size,
                scale_min=d.scale_min,
                scale_max=d.scale_max,
            )
            for f in rows
            if f.kind == kind and f.k == top_k
        ]
    return out


def _store_shortlist(run: JudgeRun, finals: list[JudgeFinal]) -> None:
    """The reviewer's shortlists for the run's domain (JudgeShortlist; engine.shortlist):

    - per dimension of this run, from its finals, replacing the run's own;
    - over all dimensions, from the newest prediction run of every scope of this reviewer and
      domain (automatic prediction runs are one per dimension), this run standing for its own
      scope; stored with this run, replacing the reviewer's previous all-dimensions list.
    Serialised per reviewer (a row lock), so two runs finishing together leave one list."""
    reviewer_id = cast(int, run.reviewer_id)
    dims = {d.id: d for d in selectors.dimensions_for_domain(run.domain)}
    size = int(getattr(settings, "JUDGE_SHORTLIST_SIZE", 10))
    own = [e for e in shortlist.shortlists(_shortlist_candidates(finals, dims), size=size)]
    with transaction.atomic():
        User.objects.select_for_update().filter(id=reviewer_id).first()
        newest: dict[str, int] = {}
        for other_id, scope in (
            JudgeRun.objects.filter(
                purpose=JudgeRun.Purpose.PREDICTION,
                reviewer_id=reviewer_id,
                domain_id=run.domain_id,
                status__in=[JudgeRun.Status.DONE, JudgeRun.Status.RUNNING],
                finals__isnull=False,
            )
            .exclude(scope_key=run.scope_key)
            .distinct()
            .order_by("id")
            .values_list("id", "scope_key")
        ):
            newest[scope] = other_id
        others = list(JudgeFinal.objects.filter(run_id__in=list(newest.values())))
        combined = _shortlist_candidates([*finals, *others], dims) if others else None
        overall = [
            e
            for e in shortlist.shortlists(
                combined if combined is not None else _shortlist_candidates(finals, dims),
                size=size,
            )
            if e.dimension_id is None
        ]
        entries = [e for e in own if e.dimension_id is not None] + overall
        JudgeShortlist.objects.filter(run_id=run.id).delete()
        JudgeShortlist.objects.filter(
            reviewer_id=reviewer_id, domain_id=run.domain_id, dimension__isnull=True
        ).delete()
        JudgeShortlist.objects.bulk_create(
            [
                JudgeShortlist(
                    run_id=run.id,
                    reviewer_id=reviewer_id,
                    domain_id=run.domain_id,
                    dimension_id=e.dimension_id,
                    idea_id=e.idea_id,
                    rank=e.rank,
                    predicted_score=e.predicted_score,
                    confidence=e.confidence,
                    signal=e.signal,
                    panel_size=e.panel_size,
                )
                for e in entries
            ],
            batch_size=1000,
        )


def _finish(run: JudgeRun, status: str, *, error: str = "") -> bool:
    """Move a running run to a final status (once: conditional), and tell the alignment; a
    finished prediction run also makes the decision board (apps/decisions) stale, since the
    ranking weighs the predicted scores."""
    n = JudgeRun.objects.filter(id=run.id, status=JudgeRun.Status.RUNNING).update(
        status=status, finished_at=timezone.now(), error=error[:5000], updated_at=timezone.now()
    )
    if n:
        history_status(run, JudgeRun.Status.RUNNING, status, note=error[:500])
        transaction.on_commit(lambda: alignment.alignment_runs_finished(run_ids=[run.id]))
        if run.purpose == JudgeRun.Purpose.PREDICTION and status == JudgeRun.Status.DONE:
            transaction.on_commit(decisions_mark_stale)
    return bool(n)


def _status(run_id: int) -> str | None:
    return JudgeRun.objects.filter(id=run_id).values_list("status", flat=True).first()


def judge_run_execute(*, run_id: int) -> str:
    """Claim, plan (once) and execute a run, or help with its chunks; safe to call any number
    of times, concurrently or after a crash (see module docstring).

    Returns what happened: "done"; "working" (other workers hold the remaining chunks, the last
    of them finishes the run); "not-found"; or the status the run already had ("cancelled",
    "failed", "done").
    """
    claimed = JudgeRun.objects.filter(id=run_id, status=JudgeRun.Status.QUEUED).update(
        # The database's clock, like changed_at in scheduling: one clock, no skew.
        status=JudgeRun.Status.RUNNING,
        started_at=Now(),
        heartbeat_at=Now(),
        updated_at=timezone.now(),
    )
    run = JudgeRun.objects.select_related("domain", "reviewer").filter(id=run_id).first()
    if run is None:
        return "not-found"
    if claimed:
        history_status(run, JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING)
    elif run.status != JudgeRun.Status.RUNNING:
        return run.status
    token = uuid.uuid4().hex
    try:
        plan = _ensure_plan(run)
        complete = _work(run, plan, token)
        if not complete:
            # A run deleted meanwhile has no status: it is not found.
            current = _status(run_id) or "not-found"
            return current if current != JudgeRun.Status.RUNNING else "working"
        if run.purpose != JudgeRun.Purpose.PREDICTION:
            _calibrate(run, plan)
        _finalize(run)
    except LeaseLost:
        status = _status(run_id)
        return "working" if status == JudgeRun.Status.RUNNING else (status or "not-found")
    except TransientBackendError as exc:
        # The run stays "running": the retried task resumes it, skipping stored predictions.
        _release(run_id, token)
        raise RunDeferred(str(exc)) from exc
    except SoftTimeLimitExceeded as exc:
        # A long run continues in a fresh task rather than failing: the work done is stored.
        _release(run_id, token)
        raise RunDeferred("time limit reached; continuing in a new task") from exc
    except (PermanentBackendError, ApplicationError) as exc:
        _finish(run, JudgeRun.Status.FAILED, error=str(exc))
        return JudgeRun.Status.FAILED
    except Exception as exc:
        log.exception("Judge run %s failed", run_id)
        _finish(run, JudgeRun.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        return JudgeRun.Status.FAILED
    if not _finish(run, JudgeRun.Status.DONE):
        return _status(run_id) or "not-found"
    run.refresh_from_db()
    if run.rerun_requested and run.purpose != JudgeRun.Purpose.STUDY and run.reviewer is not None:
        judge_run_request(
            purpose=run.purpose,
            domain=run.domain,
            dimensions=run.dimensions,
            configs=list(run.configs.all()),
            reviewer=run.reviewer,
        )
    return JudgeRun.Status.DONE


def _release(run_id: int, token: str) -> None:
    """Give our chunks back (a deferred run is retried later, by us or another worker)."""
    JudgeRunChunk.objects.filter(
        run_id=run_id, lease_token=token, status=JudgeRunChunk.Status.RUNNING
    ).update(status=JudgeRunChunk.Status.PENDING, lease_token="")


def judge_run_fail(*, run_id: int, error: str) -> bool:
    """Give up on a running run (e.g. the endpoint stayed down through every retry)."""
    run = JudgeRun.objects.filter(id=run_id).first()
    return run is not None and _finish(run, JudgeRun.Status.FAILED, error=error)


def judge_shortlists_rebuild() -> int:
    """Store every reviewer's shortlists again from the finished prediction runs (after a
    restore: shortlists are derived rows). Oldest run first, so each reviewer's all-dimensions
    list ends up built by their newest run, as when the runs finished. Returns runs replayed."""
    runs = JudgeRun.objects.filter(
        purpose=JudgeRun.Purpose.PREDICTION, status=JudgeRun.Status.DONE, reviewer__isnull=False
    ).order_by("id")
    n = 0
    for run in runs.select_related("domain"):
        _store_shortlist(run, list(JudgeFinal.objects.filter(run=run)))
        n += 1
    return n
