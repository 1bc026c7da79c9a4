"""Measure, per domain, which parts of an item (idea, source document) the offline judge's text
fallback should read, and store the choice (apps.judges.services.item_parts).

    manage.py judge_item_parts                 # every domain
    manage.py judge_item_parts --domain pbig   # one domain
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.catalog.models import Domain
from apps.core.errors import ApplicationError
from apps.judges.engine.item_parts import SEEDS, K
from apps.judges.services.item_parts import item_parts_measure


class Command(BaseCommand):
    help = (
        "Measure per domain which item text parts (idea + source, idea, source) make the "
        "text-only judge align best in leave-one-out, and store the choice."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--domain", default="", help="A domain key (default: every domain).")
        parser.add_argument("--k", type=int, default=K, help=f"Examples per target ({K}).")
        parser.add_argument(
            "--seeds", type=int, default=len(SEEDS), help=f"Example draws ({len(SEEDS)})."
        )

    def handle(self, *args: object, **options: Any) -> None:
        key = str(options["domain"] or "")
        domains = Domain.objects.order_by("key")
        if key:
            domains = domains.filter(key=key)
            if not domains.exists():
                known = ", ".join(Domain.objects.order_by("key").values_list("key", flat=True))
                raise CommandError(f"--domain: no domain {key!r} (known: {known or 'none'})")
        for domain in domains:
            try:
                choice = item_parts_measure(
                    domain=domain,
                    k=int(options["k"]),
                    seeds=int(options["seeds"]),
                )
            except ApplicationError as exc:
                raise CommandError(str(exc)) from exc
            m = choice.measurement
            self.stdout.write(f"{domain.key}: {choice.parts} ({m.get('reason', '')})")
            for f in m.get("figures", []):
                self.stdout.write(
                    f"  {f['parts']:<12} per-reviewer alpha {_fmt(f['per_reviewer_alpha'])}"
                    f"  pooled alpha {_fmt(f['pooled_alpha'])}  cells {f['reviewers']}"
                )
            if m.get("figures"):
                self.stdout.write(
                    f"  level-only baseline pooled alpha {_fmt(m.get('baseline_pooled_alpha'))};"
                    f" {m.get('n_targets', 0)} leave-one-out targets"
                )


def _fmt(value: object) -> str:
    return "n/a" if value is None else f"{float(value):+.3f}"  # type: ignore[arg-type]
