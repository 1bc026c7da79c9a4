"""Executing judge runs: plan once, judge in chunks under leases, calibrate, vote, finish.

Invariants
- A run's plan (targets, example pool, configurations) is computed once, when the run is
  claimed, and stored (JudgeRunPlan) with its chunks (JudgeRunChunk) in the same transaction;
  a resumed run, and every worker helping with it, executes that plan, never newer ratings.
- The run lock is a lease, the same on every database: a worker works on a chunk only while it
  holds the chunk's lease (status RUNNING, its token, a heartbeat fresher than
  JUDGE_LEASE_SECONDS), taken by a conditional UPDATE and renewed between batches. A dead
  worker's chunk is taken over by the next worker that asks, and the reclaim job
  (services.reclaim.judge_runs_reclaim) sends the run again when nobody is working on it.
- Per-seed predictions are upserted under (run, reviewer, idea, dimension, kind, k, seed) and
  the executor skips units that already have one: a retried or duplicated task finishes the
  run, with no duplicates.
- Progress and cost are recomputed from the stored predictions, never incremented, so a
  resumed run does not count a call twice.
- The run is finished (finals voted, status DONE) by whichever worker finds every chunk done;
  the finals are upserted and the status change is conditional, so two finishers agree.

The steps live in their own modules: run_plans (the stored plan), chunks (leases and judging),
calibration, finals (the vote), shortlists.
"""

from __future__ import annotations

import logging

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction
from django.db.models.functions import Now
from django.utils import timezone

from apps.core import hooks, table_statistics
from apps.core.errors import ApplicationError
from apps.core.leases import LeaseLost, lease_token
from apps.judges.engine.judgment import (
    PermanentBackendError,
    TransientBackendError,
)
from apps.judges.models import (
    JudgeFinal,
    JudgePrediction,
    JudgeRun,
    JudgeRunChunk,
    JudgeShortlist,
)
from apps.judges.services import alignment
from apps.judges.services.bursts import recompute_due
from apps.judges.services.calibration import calibrate_run
from apps.judges.services.chunks import work_chunks
from apps.judges.services.finals import finalize_run
from apps.judges.services.prediction_store import forget_deleted_references
from apps.judges.services.run_plans import ensure_plan
from apps.judges.services.runs import history_status, judge_run_request
from apps.judges.services.shortlists import panel_shortlist_after_run

log = logging.getLogger(__name__)


# What every finished run adds rows to.
JUDGED = (JudgePrediction, JudgeFinal, JudgeShortlist)


class RunDeferred(Exception):
    """The backend is temporarily unavailable; the task should retry the run later."""


def _finish(run: JudgeRun, status: str, *, error: str = "") -> bool:
    """Move a running run to a final status (once: conditional), and tell the alignment; a
    finished prediction run also runs PREDICTIONS_CHANGED_HOOKS (settings: the decision board,
    which weighs the predicted scores). The tables a refresh grows by millions of rows get fresh
    planner statistics once they have grown enough (apps.core.table_statistics), before the
    snapshots that read them are planned."""
    n = JudgeRun.objects.filter(id=run.id, status=JudgeRun.Status.RUNNING).update(
        status=status, finished_at=timezone.now(), error=error[:5000], updated_at=timezone.now()
    )
    if n:
        history_status(run, JudgeRun.Status.RUNNING, status, note=error[:500])
        transaction.on_commit(lambda: table_statistics.analyze_stale(JUDGED))
        transaction.on_commit(lambda: alignment.alignment_after_run(run))
        if run.purpose == JudgeRun.Purpose.PREDICTION:
            # Whatever its own status: the last run of a burst brings in the others' predictions.
            transaction.on_commit(lambda: _predictions_changed(run))
        if run.purpose == JudgeRun.Purpose.PREDICTION and status == JudgeRun.Status.DONE:
            # After the DONE status is committed: the last run of a burst sees all finished.
            transaction.on_commit(lambda: panel_shortlist_after_run(run))
    return bool(n)


def _predictions_changed(run: JudgeRun) -> None:
    """PREDICTIONS_CHANGED_HOOKS (the decision board reads every reviewer's predictions), once
    per burst (services.bursts); after the run's commit, so the last run of a burst sees every
    other one finished."""
    if recompute_due("predictions-changed", purpose=run.purpose, run_id=run.id):
        reviewers = [run.reviewer_id] if run.reviewer_id else []
        hooks.run_after_commit("PREDICTIONS_CHANGED_HOOKS", reviewer_ids=reviewers)


def _status(run_id: int) -> str | None:
    return JudgeRun.objects.filter(id=run_id).values_list("status", flat=True).first()


def judge_run_execute(*, run_id: int) -> str:
    """Claim, plan (once) and execute a run, or help with its chunks; safe to call any number
    of times, concurrently or after a crash (see module docstring).

    Returns what happened: "done"; "working" (other workers hold the remaining chunks, the last
    of them finishes the run); "not-found"; or the status the run already had ("cancelled",
    "failed", "done").
    """
    claimed = JudgeRun.objects.filter(id=run_id, status=JudgeRun.Status.QUEUED).update(
        # The database's clock, like changed_at in scheduling: one clock, no skew.
        status=JudgeRun.Status.RUNNING,
        started_at=Now(),
        heartbeat_at=Now(),
        updated_at=timezone.now(),
    )
    run = JudgeRun.objects.select_related("domain", "reviewer").filter(id=run_id).first()
    if run is None:
        return "not-found"
    if claimed:
        history_status(run, JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING)
    elif run.status != JudgeRun.Status.RUNNING:
        return run.status
    token = lease_token()
    try:
        plan = ensure_plan(run)
        complete, whole = work_chunks(run, plan, token)
        if not complete:
            # A run deleted meanwhile has no status: it is not found.
            current = _status(run_id) or "not-found"
            return current if current != JudgeRun.Status.RUNNING else "working"
        deleted = forget_deleted_references(run)
        if run.purpose != JudgeRun.Purpose.PREDICTION and whole is None:
            calibrate_run(run, plan)
        # The rows of a run judged whole, unless some are gone: then those stored.
        finalize_run(run, rows=None if deleted else whole)
    except LeaseLost:
        status = _status(run_id)
        return "working" if status == JudgeRun.Status.RUNNING else (status or "not-found")
    except TransientBackendError as exc:
        # The run stays "running": the retried task resumes it, skipping stored predictions.
        _release(run_id, token)
        raise RunDeferred(str(exc)) from exc
    except SoftTimeLimitExceeded as exc:
        # A long run continues in a fresh task rather than failing: the work done is stored.
        _release(run_id, token)
        raise RunDeferred("time limit reached; continuing in a new task") from exc
    except (PermanentBackendError, ApplicationError) as exc:
        _finish(run, JudgeRun.Status.FAILED, error=str(exc))
        return JudgeRun.Status.FAILED
    except Exception as exc:
        log.exception("Judge run %s failed", run_id)
        _finish(run, JudgeRun.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        return JudgeRun.Status.FAILED
    if not _finish(run, JudgeRun.Status.DONE):
        return _status(run_id) or "not-found"
    run.refresh_from_db()
    if run.rerun_requested and run.purpose != JudgeRun.Purpose.STUDY and run.reviewer is not None:
        judge_run_request(
            purpose=run.purpose,
            domain=run.domain,
            dimensions=run.dimensions,
            configs=list(run.configs.all()),
            reviewer=run.reviewer,
        )
    return JudgeRun.Status.DONE


def _release(run_id: int, token: str) -> None:
    """Give our chunks back (a deferred run is retried later, by us or another worker)."""
    JudgeRunChunk.objects.filter(
        run_id=run_id, lease_token=token, status=JudgeRunChunk.Status.RUNNING
    ).update(status=JudgeRunChunk.Status.PENDING, lease_token="")


def judge_run_fail(*, run_id: int, error: str) -> bool:
    """Give up on a running run (e.g. the endpoint stayed down through every retry)."""
    run = JudgeRun.objects.filter(id=run_id).first()
    return run is not None and _finish(run, JudgeRun.Status.FAILED, error=error)
