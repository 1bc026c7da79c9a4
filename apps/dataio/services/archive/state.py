"""What an installation needs to carry on working beyond the import formats (archive version 2).

Accounts with their password hashes and roles, assignments (pending ones included), the `source`
of each rating, and the judges: configurations, runs, per-seed predictions, finals,
calibrations and their history. Every row is keyed by natural keys (usernames, external ids,
domain and dimension keys, configuration names), except judge runs, which keep their id: pages,
snapshots ("run-<id>") and finals name runs by id, and a restore goes into an installation that
has none.

The files are written and read back by accounts.py and judge_files.py / judge_restore.py, rows
are inserted by rows.py (times kept as they were), and what is derived is queued again by
derived.py.

Not carried: API tokens and sessions (credentials: clients sign in again and make new tokens),
login-attempt logs, invitations (a record of mails sent), and what is derived and recomputed
after the restore: judge run plans and chunks (an unfinished run comes back cancelled, with a
note: start it again), item vectors (recomputed by the next run), metric and alignment
snapshots (queued for recompute by `snapshots_recompute`).
"""

from __future__ import annotations

from apps.dataio.services.archive.accounts import accounts_write
from apps.dataio.services.archive.judge_files import judges_write
from apps.dataio.services.archive.members import ArchiveWriter

STATE_FILES = [
    "accounts.csv",
    "assignments.csv",
    "judge_configs.jsonl",
    "judge_runs.jsonl",
    "judge_predictions.csv",
    "judge_finals.csv",
    "judge_calibrations.jsonl",
    "judge_history.jsonl",
]


def state_write(writer: ArchiveWriter) -> None:
    """The version-2 files (module docstring), written into the archive."""
    accounts_write(writer)
    judges_write(writer)
