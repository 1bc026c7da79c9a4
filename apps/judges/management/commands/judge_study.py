"""Run a judge study synchronously, in this process, and print the alignment table.

This is a command, not a web request: it runs every judge call here and may take long with an
LLM backend (no Celery involved). Web users start studies from /judges/runs/ or the API instead.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.catalog.models import Domain
from apps.core.errors import ApplicationError
from apps.judges import selectors, services
from apps.judges.api.views.runs import resolve_configs
from apps.judges.models import LOCAL_LABEL, JudgeConfig, JudgeRun
from apps.judges.services.runs import parse_signals


def _ints(value: str, option: str) -> list[int]:
    try:
        return sorted({int(v) for v in value.split(",") if v.strip() != ""})
    except ValueError as exc:
        raise CommandError(f"{option}: whole numbers separated by commas, got {value!r}") from exc


class Command(BaseCommand):
    help = (
        "Run a judge study synchronously in this process (not through Celery) and print "
        "Krippendorff's "
        "alpha per configuration, k and dimension."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--backend",
            choices=["local", "openai"],
            default="",
            help=f"local = {LOCAL_LABEL}; openai = the OpenAI-compatible endpoint in LLM_*.",
        )
        parser.add_argument(
            "--configs",
            default="zero_shot,aggregate,personalized",
            help="Comma-separated kinds, configuration names or ids.",
        )
        parser.add_argument("--shots", default="0,1,2,5,9")
        parser.add_argument("--seeds", type=int, default=3)
        parser.add_argument("--domain", required=True, help="Domain key")
        parser.add_argument(
            "--dimension",
            action="append",
            required=True,
            help="Dimension key; repeat or separate with commas for several.",
        )
        parser.add_argument(
            "--min-history",
            type=int,
            default=2,
            help="Leave out reviewers with fewer scored ratings in the dimension.",
        )
        parser.add_argument(
            "--signals",
            default="panel,text",
            help="Signals of the offline judge: panel,text (default, as in production: other "
            "reviewers' scores on the idea when there are some, the text otherwise) or text "
            "(the text-only judge).",
        )
        parser.add_argument("--format", choices=["table", "json"], default="table")

    def handle(self, *args: Any, **opts: Any) -> None:
        domain = Domain.objects.filter(key=opts["domain"]).first()
        if domain is None:
            known = ", ".join(Domain.objects.values_list("key", flat=True)) or "none"
            raise CommandError(f"--domain: no domain {opts['domain']!r} (known: {known})")
        dimensions = [
            d.strip() for value in opts["dimension"] for d in value.split(",") if d.strip()
        ]
        try:
            signals = parse_signals(opts["signals"])
        except ApplicationError as exc:
            raise CommandError(
                f"--signals: give panel,text (the default) or text; got {opts['signals']!r}"
            ) from exc
        services.judge_configs_ensure_defaults()
        try:
            configs = resolve_configs([c for c in opts["configs"].split(",") if c.strip()])
            run, created = services.judge_study_start(
                by=None,
                domain=domain,
                dimensions=dimensions,
                configs=configs,
                shots=_ints(opts["shots"], "--shots"),
                seeds=opts["seeds"],
                backend=opts["backend"],
                min_history=opts["min_history"],
                enqueue=False,
                signals=signals,
            )
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        if not created:
            raise CommandError(
                f"The same study is already {run.status} as run #{run.id}; cancel it or wait."
            )
        if opts["format"] == "table":
            self.stderr.write(
                f"Study #{run.id}: running {', '.join(c.name for c in configs)} synchronously "
                "in this process (a command, not a web request; no Celery worker involved)…"
            )
        outcome = services.judge_run_execute(run_id=run.id)
        run.refresh_from_db()
        if run.status != JudgeRun.Status.DONE:
            raise CommandError(
                f"Study #{run.id} ended {outcome}: {run.error or 'see the run history'}"
            )
        report = selectors.alignment_report(run_ids=[run.id], with_reasoning=False)
        table = selectors.alignment_table(report)
        backends = sorted({run.backend or c.backend for c in configs})
        summary = {
            "run": run.id,
            "domain": domain.key,
            "dimensions": dimensions,
            "signals": run.signals,
            "backend": [JudgeConfig.Backend(b).label for b in backends],
            "calls": run.calls,
            "tokens_in": run.tokens_in,
            "tokens_out": run.tokens_out,
            "estimated_cost": float(run.estimated_cost),
            "predictions": run.done,
            "failed": run.failed,
            "alignment": table,
            "coarse": report["coarse"],
        }
        if opts["format"] == "json":
            self.stdout.write(json.dumps(summary, indent=2))
            return
        self.stdout.write(
            f"Study #{run.id} · {domain.name} · backend: {', '.join(summary['backend'])}"
            f" · signals: {run.signals}"
        )
        self.stdout.write(
            f"{'config':<14}{'k':>3}  {'dimension':<24}{'alpha':>8}{'n':>6}{'discard':>9}"
            f"{'per-rev':>9}{'level':>8}{'lift':>8}{'coverage':>10}"
        )

        def fmt(value: float | None, spec: str = ".3f") -> str:
            return "n/a" if value is None else format(value, spec)

        for row in table:
            alpha = fmt(row["alpha"])
            discard = "–" if row["discard_rate"] is None else f"{100 * row['discard_rate']:.1f}%"
            coverage = "–" if row["coverage"] is None else f"{100 * row['coverage']:.1f}%"
            self.stdout.write(
                f"{row['config']:<14}{row['k']:>3}  {row['dimension']:<24}"
                f"{alpha:>8}{row['n']:>6}{discard:>9}"
                f"{fmt(row['per_reviewer_alpha']):>9}{fmt(row['level_only_alpha']):>8}"
                f"{fmt(row['lift'], '+.3f'):>8}{coverage:>10}"
                + ("  adds nothing beyond the level" if row["adds_nothing"] else "")
                + ("  not shown to beat the level" if row.get("lift_status") == "unproven" else "")
            )
        self.stdout.write(
            "alpha: pooled over reviewers (paper 001); per-rev: mean of each reviewer's own "
            "alpha; level: the level-only baseline (mean of the k examples); lift = alpha - level."
        )
        self.stdout.write(
            f"{run.calls} calls, {run.tokens_in} tokens in, {run.tokens_out} out, "
            f"est. ${run.estimated_cost:.4f}"
        )
