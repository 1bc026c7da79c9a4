"""Alignment snapshots: the judge alignment is computed by a task when runs finish, stored, and
read by pages, the API and the CSV exports (like the disagreement metrics).

Contract used by the run execution: `alignment_runs_finished(run_ids=...)` is called after a run
reaches a final status (after commit); it must be cheap and must not compute anything itself.
"""

from __future__ import annotations

from collections.abc import Sequence


def alignment_runs_finished(*, run_ids: Sequence[int]) -> None:
    """These runs finished: make sure a stored alignment snapshot will reflect them."""
    return None
