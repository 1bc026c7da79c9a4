"""Compute the disagreement metrics now (no worker, nothing stored) and print them."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.disagreement import presenters as P
from apps.disagreement.models import Level
from apps.screening.selectors.frame import (
    dimension_labels,
    rating_frame,
    rubric_categories,
    rubric_scales,
)


class Command(BaseCommand):
    help = "Compute disagreement metrics over the stored ratings and print them (JSON or a table)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", choices=["json", "table"], default="table")
        parser.add_argument("--domain", help="domain key; default every domain")
        parser.add_argument("--dimension", help="dimension key; default every dimension")
        parser.add_argument("--level", choices=Level.values, default=Level.ORDINAL)
        parser.add_argument(
            "--n-boot", type=int, default=1000, help="bootstrap resamples for the CI"
        )
        parser.add_argument(
            "--include-categories",
            action="store_true",
            help="count category levels (PBIG's 0 = not B2B) as the lowest grade; by default "
            "they are left out of the ordinal figures and reported apart",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        from apps.disagreement.analysis import compute_metrics

        frame = rating_frame(domain=opts["domain"], dimension=opts["dimension"])
        if opts["domain"] and frame.empty:
            raise CommandError(f"No ratings in domain {opts['domain']!r}.")
        if opts["dimension"] and frame.empty:
            raise CommandError(f"No ratings on dimension {opts['dimension']!r}.")
        result = compute_metrics(
            frame,
            scales=rubric_scales(),
            level=opts["level"],
            n_boot=opts["n_boot"],
            categories=rubric_categories(),
            include_categories=opts["include_categories"],
        )
        if opts["format"] == "json":
            self.stdout.write(json.dumps(result, indent=2, default=str))
            return
        self._table(result)

    def _table(self, result: dict[str, Any]) -> None:
        labels = dimension_labels()
        out = self.stdout
        out.write(
            f"{result.get('n_ratings', 0)} ratings ({result.get('n_scored', 0)} scored), "
            f"{result.get('n_ideas', 0)} ideas, {result.get('n_reviewers', 0)} reviewers; "
            f"{result.get('level')} alpha\n"
        )
        cells = [c for c in result.get("cells", []) if c.get("background") == P.ALL]
        if not cells:
            out.write("No metrics: not enough ratings.\n")
            return
        header = (
            f"{'domain':<14} {'dimension':<24} {'alpha':>7} {'95% CI':>16} {'items':>6} "
            f"{'jaccard':>8} {'pairs':>6}  reading"
        )
        out.write(header + "\n" + "-" * len(header) + "\n")
        order = {k: i for i, k in enumerate(labels)}
        for c in sorted(
            cells, key=lambda c: (c["domain"] == P.ALL, c["domain"], order.get(c["dimension"], 99))
        ):
            f, k = c["fine"], c["coarse"]
            ci = f"[{P.fmt(f.get('ci_low'))}, {P.fmt(f.get('ci_high'))}]"
            out.write(
                f"{c['domain']:<14} {labels.get(c['dimension'], c['dimension'])[:24]:<24} "
                f"{P.fmt(f.get('alpha')):>7} {ci:>16} {f.get('n_items', 0):>6} "
                f"{P.fmt(k.get('jaccard')):>8} {k.get('n_pairs', 0):>6}  {c.get('reading', '')}\n"
            )
