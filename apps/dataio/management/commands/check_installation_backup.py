from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.core.errors import ApplicationError
from apps.dataio.services.archive.check import DUMP_OPTION, installation_backup_check
from apps.dataio.services.archive.tables import installation_snapshot


class Command(BaseCommand):
    help = (
        "Restore an installation archive into a scratch PostgreSQL database (created beside this "
        "installation's and dropped afterwards) and compare every table with this installation; "
        "exits non-zero on any difference (docs/operations.md, 'Backups')."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", nargs="?", help="the .zip archive made by export_installation")
        # Used by the check itself, in the process that reads the scratch database.
        parser.add_argument(DUMP_OPTION, dest="snapshot_into", help=argparse.SUPPRESS)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["snapshot_into"]:
            Path(options["snapshot_into"]).write_text(json.dumps(installation_snapshot()))
            return
        if not options["file"]:
            raise CommandError("Name the archive to check: check_installation_backup FILE.zip")
        path = Path(options["file"]).resolve()
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            check = installation_backup_check(path=path)
        except ApplicationError as exc:
            raise CommandError(
                f"{exc.message} " + "; ".join(f"{e.field}: {e.message}" for e in exc.errors)
            ) from exc
        if not check.restored:
            self.stderr.write(check.restore_output.rstrip())
            raise CommandError(
                f"{path.name} does not restore (scratch database {check.database}, dropped)."
            )
        self.stdout.write(
            f"Restored {path.name} into the scratch database {check.database} and compared "
            f"every table ({check.seconds:.1f} s; the database is dropped)."
        )
        self.stdout.write(f"{'table':<34} {'kind':<12} {'source':>9} {'restored':>9}  result")
        for t in check.tables:
            if t.kind == "carried":
                result = "same" if t.ok else "DIFFERENT"
            else:
                result = f"{'not compared' if t.ok else 'UNCLASSIFIED'}: {t.reason}"
            line = f"{t.label:<34} {t.kind:<12} {t.source_rows:>9} {t.restored_rows:>9}  {result}"
            self.stdout.write(line if t.ok else self.style.ERROR(line))
            for row in t.only_in_source:
                self.stdout.write(f"    only in the source:  {_short(row)}")
            for row in t.only_in_restore:
                self.stdout.write(f"    only in the restore: {_short(row)}")
        bad = [t.label for t in check.tables if not t.ok]
        carried = sum(t.kind == "carried" for t in check.tables)
        if bad:
            raise CommandError(
                f"The restore differs from this installation in {len(bad)} tables: "
                + ", ".join(bad)
            )
        self.stdout.write(
            self.style.SUCCESS(f"All {carried} carried tables are identical after the restore.")
        )


def _short(row: tuple[Any, ...]) -> str:
    text = ", ".join(row)
    return text if len(text) <= 300 else text[:297] + "..."
