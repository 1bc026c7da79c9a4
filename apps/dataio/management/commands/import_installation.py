from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.errors import ApplicationError
from apps.dataio.services.archive import installation_import


class Command(BaseCommand):
    help = "Load an archive made by export_installation into an empty installation; all or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the .zip archive")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            with path.open("rb") as content:
                results = installation_import(content=content)
        except ApplicationError as exc:
            for err in exc.errors:
                row = "-" if err.row is None else err.row
                value = "" if err.value in (None, "") else f" (value: {err.value!r})"
                self.stderr.write(f"row {row}, {err.field}: {err.message}{value}")
            raise CommandError(f"{path.name}: {exc.message}") from exc
        for result in results:
            self.stdout.write(self.style.SUCCESS(result.summary()))
