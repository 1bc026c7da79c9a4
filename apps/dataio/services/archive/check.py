"""Proving a backup restores: restore it into a scratch database and compare every table.

`installation_backup_check` creates a new PostgreSQL database on the same server as the
installation's (named after it, `<name>_backup_check_<pid>`), migrates it and restores the
archive into it with `manage.py import_installation`, run as a child process whose settings
point at the scratch database, an in-memory broker and a per-process cache: the restore's
after-commit messages (snapshot recomputes) never reach the installation's worker. Then every
table is compared with the installation's own (apps.dataio.services.archive.tables), and the
scratch database is dropped whatever happened.

The comparison is with the installation as it is now: run it on the archive just written
(`export_installation FILE && check_installation_backup FILE`); a change made in between shows
as a difference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import psycopg
from django.conf import settings
from django.db import connection

from apps.core.errors import ApplicationError, FieldError
from apps.dataio.services.archive.tables import (
    TableCheck,
    compare_snapshots,
    installation_snapshot,
)

# The hidden option of check_installation_backup that writes a snapshot of its own database.
DUMP_OPTION = "--snapshot-into"


@dataclass
class BackupCheck:
    """The outcome: the restore's own output, and every table's comparison."""

    database: str
    restored: bool
    restore_output: str = ""
    tables: list[TableCheck] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.restored and all(t.ok for t in self.tables)


def _url(params: dict[str, object], name: str) -> str:
    user = quote(str(params.get("USER") or ""), safe="")
    password = quote(str(params.get("PASSWORD") or ""), safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = params.get("HOST") or "localhost"
    port = f":{params['PORT']}" if params.get("PORT") else ""
    return f"postgres://{auth}{host}{port}/{quote(name, safe='')}"


def _admin_connection(params: dict[str, object]) -> psycopg.Connection:
    return psycopg.connect(_url(params, "postgres"), autocommit=True)


def _manage(args: list[str], *, url: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        # The restore's after-commit messages go nowhere: no worker of this installation may
        # compute against ids of the scratch database.
        "CELERY_BROKER_URL": "memory://",
        "CACHE_URL": "locmem://",
        "DJANGO_SETTINGS_MODULE": os.environ.get(
            "DJANGO_SETTINGS_MODULE", "config.settings.production"
        ),
    }
    return subprocess.run(
        [sys.executable, str(Path(settings.BASE_DIR) / "manage.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def installation_backup_check(*, path: Path) -> BackupCheck:
    """Restore `path` into a scratch database and compare every table (module docstring)."""
    if connection.vendor != "postgresql":
        raise ApplicationError(
            "The backup check needs PostgreSQL.",
            errors=[
                FieldError(
                    field="DATABASE_URL",
                    message="must name a PostgreSQL database: the check creates a scratch "
                    "database beside it",
                    value=connection.vendor,
                )
            ],
        )
    params = dict(connection.settings_dict)
    name = f"{params['NAME']}_backup_check_{os.getpid()}"[:63]
    url = _url(params, name)
    started = time.monotonic()
    with _admin_connection(params) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    check = BackupCheck(database=name, restored=False)
    try:
        migrate = _manage(["migrate", "--noinput", "-v", "0"], url=url)
        if migrate.returncode != 0:
            check.restore_output = migrate.stdout + migrate.stderr
            return check
        restore = _manage(["import_installation", str(path)], url=url)
        check.restore_output = restore.stdout + restore.stderr
        check.restored = restore.returncode == 0
        if check.restored:
            # The scratch database's tables are read by a process whose settings name it (this
            # process keeps one database); both sides go through the same `table_rows`.
            with tempfile.TemporaryDirectory() as tmp:
                dump = Path(tmp) / "restored.json"
                read = _manage(["check_installation_backup", DUMP_OPTION, str(dump)], url=url)
                if read.returncode != 0:
                    check.restored = False
                    check.restore_output += read.stdout + read.stderr
                    return check
                restored = json.loads(dump.read_text())
            check.tables = compare_snapshots(installation_snapshot(), restored)
    finally:
        with _admin_connection(params) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        check.seconds = time.monotonic() - started
    return check
