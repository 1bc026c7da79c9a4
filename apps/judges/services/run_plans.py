"""A judge run's stored plan: computed once, when the run is claimed, and stored
(JudgeRunPlan) with its chunks (JudgeRunChunk) in the same transaction; a resumed run, and every
worker helping with it, executes that plan, never newer ratings (services.execution).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import cast

from django.conf import settings
from django.db import IntegrityError, transaction

from apps.core.errors import ApplicationError
from apps.judges import selectors
from apps.judges.models import (
    JudgeConfig,
    JudgeRun,
    JudgeRunChunk,
    JudgeRunPlan,
)
from apps.judges.services import dispatch, planning
from apps.judges.services.configs import config_cannot_run
from apps.screening.models import Dimension

log = logging.getLogger(__name__)


def _config_specs(run: JudgeRun) -> list[planning.ConfigSpec]:
    """The run's configurations, less those that cannot run under the running settings (an
    openai one without an endpoint, services.configs): they are left out so the others still
    judge; when none is left the run fails naming each one's reason."""
    specs = []
    skipped = []
    for config in run.configs.order_by("kind", "id"):
        reason = config_cannot_run(config, backend=run.backend)
        if reason:
            skipped.append(f"configuration {config.name!r} cannot run: {reason}")
            continue
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
    if skipped and not specs:
        raise ApplicationError("; ".join(skipped) + ".")
    for line in skipped:
        log.warning("judge run %s: %s; left out", run.id, line)
    return specs


def _snapshot(run: JudgeRun, dims: list[Dimension], specs: list[planning.ConfigSpec]) -> dict:
    pools = selectors.rating_pool_rows(domain=run.domain, dimension_ids=[d.id for d in dims])
    unrated: list[list[int]] = []
    if run.purpose == JudgeRun.Purpose.PREDICTION:
        # A prediction run is always for one reviewer; its targets are the same ideas on every
        # dimension (those it never rated on any).
        reviewer_id = cast(int, run.reviewer_id)
        unrated = [
            [reviewer_id, idea_id, patent_id]
            for idea_id, patent_id in selectors.reviewer_unrated_ideas(
                reviewer_id=reviewer_id, domain=run.domain
            )
        ]
    pool: dict[str, list[list[int]]] = {}
    targets: dict[str, list[list[int]]] = {}
    for dim in dims:
        rows = pools[dim.id]
        pool[str(dim.id)] = rows
        if run.purpose == JudgeRun.Purpose.PREDICTION:
            targets[str(dim.id)] = [list(t) for t in unrated]
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
class Plan:
    dims: dict[int, Dimension]
    pools: dict[int, list[list[int]]]
    specs: dict[int, planning.ConfigSpec]
    units: list[planning.WorkUnit]


def _load_plan(run: JudgeRun, stored: JudgeRunPlan) -> Plan:
    dims = {d.id: d for d in selectors.dimensions_for_domain(run.domain, run.dimensions)}
    pools = {int(k): v for k, v in stored.pool.items()}
    targets = {int(k): v for k, v in stored.targets.items()}
    specs = [planning.ConfigSpec.from_dict(d) for d in stored.configs]
    units = planning.plan_units(
        dimension_ids=[d for d in dims if d in targets], targets=targets, configs=specs
    )
    return Plan(dims=dims, pools=pools, specs={s.id: s for s in specs}, units=units)


def ensure_plan(run: JudgeRun) -> Plan:
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
