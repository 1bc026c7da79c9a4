from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from apps.dataio.services.archive import installation_export_to


class Command(BaseCommand):
    help = (
        "Export the whole installation (rubrics, catalog, reviewers, ratings with their states, "
        "rating history, judge configurations and predictions) as one zip archive in the "
        "import formats (docs/formats.md, 'Installation archive')."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "output",
            nargs="?",
            help="where to write the archive (default: pluralist-YYYYMMDD-HHMMSS.zip)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["output"] or timezone.now().strftime("pluralist-%Y%m%d-%H%M%S.zip")
        path = Path(name)
        with path.open("wb") as out:
            report = installation_export_to(out)
        self.stdout.write(self.style.SUCCESS(f"Wrote {path} ({path.stat().st_size:,} bytes)."))
        for name, members in report.parts.items():
            self.stdout.write(f"{name}: split into {len(members)} parts under the per-file limit.")
        for warning in report.warnings:
            self.stderr.write(self.style.WARNING(f"WARNING: {warning}"))
