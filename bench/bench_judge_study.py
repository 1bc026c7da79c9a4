"""A full judge study of one demo domain, in process, on the local judge.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/pl_bench \\
        taskset -c 0 .venv/bin/python bench/bench_judge_study.py [--domain KEY] [--seeds 3]

Loads the demo data into an empty database first (manage.py demo), then runs one study: every
dimension of the domain x k in {0, 1, 2, 5, 9} x 3 seeds x the 3 default configurations (the
issue 7 target: under 30 s on one core). Prints the time of each phase (plan, judge and store,
calibrate and vote) and, as the reference measured in the same run, the per-unit path the engine
used before (select_examples on a pandas pool and backend.judge, one call per unit) timed on a
sample and extrapolated to the study's size.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from apps.catalog.models import Domain  # noqa: E402
from apps.judges import selectors, services  # noqa: E402
from apps.judges.backends import get_backend  # noqa: E402
from apps.judges.engine.examples import select_examples  # noqa: E402
from apps.judges.models import JudgeConfig, JudgeFinal, JudgePrediction, JudgeRun  # noqa: E402
from apps.judges.services import planning  # noqa: E402
from apps.judges.services.chunks import _Executor  # noqa: E402
from apps.judges.services.run_plans import ensure_plan  # noqa: E402

SHOTS = [0, 1, 2, 5, 9]


def reference_per_unit(run: JudgeRun, sample: int) -> tuple[float, int]:
    """Seconds per unit of the former path: a pandas select_examples and a judge() per unit."""
    plan = ensure_plan(run)
    ex = _Executor(run, plan)
    units = [u for u in plan.units if u.k > 0][:: max(1, len(plan.units) // sample)][:sample]
    backend = get_backend("local")
    pools = {
        d.id: selectors.rating_pool_frame(domain=run.domain, dimension_ids=[d.id])
        for d in plan.dims.values()
    }
    started = time.perf_counter()
    for u in units:
        select_examples(
            pools[u.dimension_id],
            kind=u.kind,
            target_reviewer_id=u.reviewer_id,
            target_idea_id=u.idea_id,
            target_patent_id=u.patent_id,
            domain=run.domain.key,
            dimension=plan.dims[u.dimension_id].key,
            k=u.k,
            seed=u.seed,
        )
        backend.judge(ex.requests([u])[0])
    return (time.perf_counter() - started) / max(1, len(units)), len(units)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--domain", default="", help="domain key (default: the first)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sample", type=int, default=200, help="units timed for the reference")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    call_command("demo", "--if-empty", verbosity=0)
    services.judge_configs_ensure_defaults()
    domain = (
        Domain.objects.get(key=args.domain) if args.domain else Domain.objects.order_by("key")[0]
    )
    dims = [d.key for d in selectors.dimensions_for_domain(domain)]
    configs = list(JudgeConfig.objects.filter(name__endswith="(default)").order_by("kind"))
    JudgeRun.objects.filter(purpose=JudgeRun.Purpose.STUDY, domain=domain).delete()

    run, _ = services.judge_study_start(
        by=None,
        domain=domain,
        dimensions=dims,
        configs=configs,
        shots=SHOTS,
        seeds=args.seeds,
        min_history=2,
        enqueue=False,
    )
    JudgeRun.objects.filter(id=run.id).update(status=JudgeRun.Status.RUNNING)
    run.refresh_from_db()
    t0 = time.perf_counter()
    plan = ensure_plan(run)
    t_plan = time.perf_counter() - t0
    examples_started = time.perf_counter()
    planning.examples_for_units(plan.units, plan.pools)
    t_examples = time.perf_counter() - examples_started
    JudgeRun.objects.filter(id=run.id).update(status=JudgeRun.Status.QUEUED)

    started = time.perf_counter()
    outcome = services.judge_run_execute(run_id=run.id)
    total = time.perf_counter() - started
    run.refresh_from_db()
    n_units = JudgePrediction.objects.filter(run=run).count()
    n_finals = JudgeFinal.objects.filter(run=run).count()
    targets = sum(len(t) for t in run.plan.targets.values())

    # The reference needs a run whose plan exists; a second study of the same scope, not executed.
    JudgeRun.objects.filter(id=run.id).update(scope_key=f"bench-done-{run.id}")
    ref_run, _ = services.judge_study_start(
        by=None,
        domain=domain,
        dimensions=dims,
        configs=configs,
        shots=SHOTS,
        seeds=args.seeds,
        min_history=2,
        enqueue=False,
    )
    per_unit, sampled = reference_per_unit(ref_run, args.sample)
    ref_run.delete()

    print(
        f"domain {domain.key}: {len(dims)} dimensions, {targets} targets, k {SHOTS}, "
        f"{args.seeds} seeds, {len(configs)} configurations"
    )
    print(f"  outcome {outcome}: {n_units} per-seed predictions, {n_finals} finals")
    print(f"  plan (snapshot + units):        {t_plan:7.2f} s")
    print(f"  example selection (batch):      {t_examples:7.2f} s   (also inside the run below)")
    print(f"  whole study (judge_run_execute): {total:7.2f} s   target < 30 s on one core")
    print(f"  = {n_units / total:,.0f} predictions/s")
    print(
        f"reference, former per-unit path ({sampled} units timed): {per_unit * 1000:.2f} ms/unit "
        f"-> {per_unit * n_units:,.0f} s for this study"
    )


if __name__ == "__main__":
    main()
