"""Shared body of the import_<kind> commands.

Open a file, import it (read as a stream), print a summary or every error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.errors import ApplicationError
from apps.dataio.services.imports import import_file

# The kinds whose files name domains (apps.dataio.importers.domains).
DOMAIN_KINDS = ("patents", "rubric")


class ImportCommand(BaseCommand):
    kind = ""

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="path of the file to import")
        parser.add_argument(
            "--dry-run", action="store_true", help="validate and count only; store nothing"
        )
        if self.kind in DOMAIN_KINDS:
            parser.add_argument(
                "--create-domains",
                action="store_true",
                help="create the domains the file names that do not exist yet (needed once "
                "the installation holds ratings: a misspelled key is refused otherwise)",
            )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            # The open file, read as a stream: a large file is never held whole.
            with path.open("rb") as file:
                result = import_file(
                    kind=self.kind,
                    content=file,
                    filename=path.name,
                    dry_run=options["dry_run"],
                    make_default=options.get("default", False),
                    domains=options.get("domain") or (),
                    create_domains=options.get("create_domains", False),
                )
        except ApplicationError as exc:
            for err in exc.errors:
                row = "-" if err.row is None else err.row
                value = "" if err.value in (None, "") else f" (value: {err.value!r})"
                self.stderr.write(f"row {row}, {err.field}: {err.message}{value}")
            raise CommandError(f"{path.name}: {exc.message}") from exc
        self.stdout.write(self.style.SUCCESS(result.summary()))
        for note in result.notes:
            self.stdout.write(f"  {note}")
