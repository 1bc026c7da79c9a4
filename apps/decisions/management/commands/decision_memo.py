"""Write a domain's decision memo (the same document the decision page exports)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.catalog.models import Domain
from apps.decisions.record.memo import FORMATS, decision_memo


class Command(BaseCommand):
    help = (
        "Write the decision memo of one domain: the ideas taken forward with their figures, "
        "readers' scores, findings and rationales, and the ideas not taken with the reason."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--domain", required=True, help="domain key")
        parser.add_argument("--format", choices=FORMATS, default="html", help="html or md")
        parser.add_argument("--output", required=True, help="the file to write ('-': stdout)")

    def handle(self, *args: Any, **opts: Any) -> None:
        key = opts["domain"]
        domain = Domain.objects.filter(key=key).first() if "\x00" not in key else None
        if domain is None:
            known = ", ".join(Domain.objects.order_by("key").values_list("key", flat=True))
            raise CommandError(f"--domain: no domain {key!r} (known: {known or 'none'})")
        text = decision_memo(domain=domain, fmt=opts["format"])
        if opts["output"] == "-":
            self.stdout.write(text)
            return
        path = Path(opts["output"])
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"--output: cannot write {path}: {exc.strerror}") from exc
        self.stdout.write(f"Wrote the {opts['format']} memo of {domain.name} to {path}.")
