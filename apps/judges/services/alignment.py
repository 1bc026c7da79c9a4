"""Alignment snapshots: the judge alignment is computed by a task when runs finish, stored, and
read by pages, the API and the CSV exports (like the disagreement metrics).

Contract used by the run execution: `alignment_runs_finished(run_ids=...)` is called after a run
reaches a final status (after commit). It is cheap and computes nothing itself.

How a burst of finished runs becomes one computation per scope (the debounce, the same
mechanics as the disagreement metrics, in one home: apps/core/snapshots.py):
- the scopes a run feeds: a finished leave-one-out evaluation feeds "auto" and
  "auto|<domain key>"; a finished study feeds "run-<id>"; predictions feed no alignment;
- a scope's waiting computation is an AlignmentSnapshot row in status QUEUED, at most one per
  scope (partial unique constraint). If it exists, it will read the new run (it reads the runs
  only when it starts), so nothing more is done;
- otherwise a QUEUED row is created and one task is sent after commit, with a countdown so the
  rest of the burst lands in the same computation;
- the task claims the row with QUEUED -> RUNNING (== 1 row), so a duplicate message does nothing;
  from then on a new run finds no QUEUED row and queues the next computation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any

from django.db.models import Max

from apps.core import snapshots, untrusted
from apps.core.errors import ApplicationError, PermissionDenied
from apps.judges import selectors
from apps.judges.engine.alignment import sample_points
from apps.judges.models import AlignmentSnapshot, JudgeRun
from apps.judges.services import dispatch
from apps.judges.services.bursts import recompute_due

logger = logging.getLogger(__name__)

# The alignment snapshots (apps/core/snapshots.py): debounced by ALIGNMENT_DEBOUNCE_SECONDS,
# the newest 5 finished kept per scope, sent to the default queue (a computation takes seconds
# and must not wait behind judge runs). A dead broker is recorded on the row, never raised.
ALIGNMENT = snapshots.SnapshotKind(
    AlignmentSnapshot,
    task=dispatch.ALIGNMENT_SNAPSHOT,
    what="alignment snapshot",
    keep=5,
    debounce="ALIGNMENT_DEBOUNCE_SECONDS",
    debounce_default=5,
    lost_error="No worker picked this computation up.",
    queue_name="default",
)
TASK_NAME = ALIGNMENT.task
AUTO_SCOPE = "auto"
# Reasoning-scatter points kept in `result` per configuration (the CSV has them all).
REASONING_SHOWN = 300
# A scope of at most this many reviewers reads only their sections of the earlier snapshots
# (`_known_sections`); a larger one reads the snapshots whole.
SECTIONS_PICKED_AT_MOST = 200


def scope_for_source(*, source: str, domain_key: str | None = None) -> str:
    """The snapshot scope a page shows: 'run-<id>' for a study, else 'auto[|domain]'."""
    if source.startswith("run-") and untrusted.parse_int(source[4:], low=1) is not None:
        return source
    return f"{AUTO_SCOPE}|{domain_key}" if domain_key else AUTO_SCOPE


def scopes_for_runs(run_ids: Sequence[int]) -> list[str]:
    """The scopes these (finished) runs feed, in a stable order."""
    scopes: list[str] = []
    rows = JudgeRun.objects.filter(id__in=list(run_ids), status=JudgeRun.Status.DONE).values_list(
        "id", "purpose", "domain__key"
    )
    for run_id, purpose, domain_key in rows:
        if purpose == JudgeRun.Purpose.STUDY:
            wanted = [f"run-{run_id}"]
        elif purpose == JudgeRun.Purpose.LOO_EVALUATION:
            wanted = [AUTO_SCOPE, f"{AUTO_SCOPE}|{domain_key}"]
        else:
            wanted = []
        scopes += [s for s in wanted if s not in scopes]
    return sorted(scopes)


def alignment_resend_lost() -> list[int]:
    """Queued computations whose message was lost (a Redis restart) are sent again; called by
    the periodic reclaim."""
    return ALIGNMENT.resend_lost()


def alignment_runs_finished(*, run_ids: Sequence[int]) -> list[AlignmentSnapshot]:
    """These runs finished: make sure a stored alignment snapshot will reflect them.

    Debounced (module docstring): one queued snapshot per scope; the task is sent after the
    caller's commit. Returns the queued snapshots (new or joined).
    """
    queued = []
    for scope in scopes_for_runs(run_ids):
        snapshot, created = ALIGNMENT.queue(scope)
        queued.append(snapshot)
        if created:
            ALIGNMENT.send_after_commit(snapshot.id, countdown=ALIGNMENT.debounce_seconds())
    return queued


def alignment_after_run(run: JudgeRun) -> list[AlignmentSnapshot]:
    """A run reached a final status (after its commit). A leave-one-out evaluation queues the
    "auto" scopes once its burst is over (services.bursts): the last run of the burst does it
    whatever its own status, so a failed or cancelled last run still brings in the others."""
    if run.purpose != JudgeRun.Purpose.LOO_EVALUATION:
        return alignment_runs_finished(run_ids=[run.id])
    scopes: list[tuple[str, int | None]] = [(AUTO_SCOPE, None)]
    if run.domain_id:
        scopes.append((f"{AUTO_SCOPE}|{run.domain.key}", run.domain_id))
    queued = []
    for scope, domain_id in scopes:
        if recompute_due(
            f"alignment:{scope}",
            purpose=run.purpose,
            run_id=run.id,
            domain_id=domain_id,
            last_seconds=selectors.alignment_last_seconds(scope=scope),
        ):
            snapshot, created = ALIGNMENT.queue(scope)
            queued.append(snapshot)
            if created:
                ALIGNMENT.send_after_commit(snapshot.id, countdown=ALIGNMENT.debounce_seconds())
    return queued


def alignment_request_recompute(*, actor: Any, scope: str) -> AlignmentSnapshot:
    """A manager's "Recompute now" (e.g. after an upgrade, or when a snapshot failed)."""
    if not getattr(actor, "can_read_all_ratings", False):
        raise PermissionDenied("Only managers and admins recompute the judge alignment.")
    if not (scope == AUTO_SCOPE or scope.startswith(f"{AUTO_SCOPE}|") or scope.startswith("run-")):
        raise ApplicationError(f"Unknown alignment scope {scope!r}.")
    snapshot, created = ALIGNMENT.queue(scope)
    if created:
        ALIGNMENT.send_after_commit(snapshot.id, countdown=0)
    return snapshot


def _run_ids_for_scope(scope: str) -> list[int]:
    if scope.startswith("run-"):
        return selectors.report_run_ids(source=scope)
    domain = None
    if "|" in scope:
        domain = selectors.domain_by_key(scope.split("|", 1)[1])
        if domain is None:
            return []
    return selectors.report_run_ids(source=AUTO_SCOPE, domain=domain)


def alignment_snapshot_compute(*, snapshot_id: int) -> AlignmentSnapshot:
    """Compute and store one queued snapshot (claimed once: apps/core/snapshots.py).

    Idempotent: a redelivered or duplicate message finds nothing to claim and returns it
    untouched. The runs are read after the claim, so every run finished before it is included.
    """
    return ALIGNMENT.compute(snapshot_id, _compute)


def _known_sections(
    scope: str, *, reviewer_ids: Collection[int | None] = ()
) -> dict[str, dict[str, Any]]:
    """Reviewer sections already computed: the newest finished snapshot's of this scope and,
    for an "auto" scope, of the other "auto" scopes (a reviewer of one domain has the same rows
    in the overall scope and in their domain's, so whichever is computed second reuses the
    first's sections; selectors.alignment_report checks each section's rows_hash).

    `reviewer_ids`, the scope's runs' reviewers: when they are at most SECTIONS_PICKED_AT_MOST
    (a domain's), only their sections are read, picked out by the database; a domain's ten
    reviewers need ten of the overall scope's thousand sections, and parsing all of them was a
    third of each domain scope at a million ratings. A study's runs have no reviewer, and the
    overall scope needs every section it can find: those read the snapshots whole."""
    picked = (
        sorted(rid for rid in reviewer_ids if rid is not None)
        if reviewer_ids
        and None not in reviewer_ids
        and len(reviewer_ids) <= SECTIONS_PICKED_AT_MOST
        else None
    )
    scopes = [scope]
    if scope == AUTO_SCOPE:
        scopes += sorted(
            set(
                AlignmentSnapshot.objects.filter(
                    scope__startswith=f"{AUTO_SCOPE}|", status=snapshots.DONE
                ).values_list("scope", flat=True)
            )
        )
    elif scope.startswith(f"{AUTO_SCOPE}|"):
        scopes.append(AUTO_SCOPE)
    newest: list[tuple[datetime, dict[str, dict[str, Any]] | None]] = []
    for name in scopes:
        rows = AlignmentSnapshot.objects.filter(scope=name, status=snapshots.DONE).order_by(
            "-created_at", "-id"
        )
        if picked is None:
            row = rows.values_list("computed_at", "per_reviewer").first()
            if row is not None and row[0] is not None:
                newest.append((row[0], row[1]))
            continue
        found = rows.values_list("id", "computed_at").first()
        if found is not None and found[1] is not None:
            keys = [f"r{rid}" for rid in picked]
            newest.append((found[1], selectors.alignment_sections(snapshot_id=found[0], keys=keys)))
    known: dict[str, dict[str, Any]] = {}
    for _, sections in sorted(newest, key=lambda row: row[0]):  # the newest section wins
        known.update(sections or {})
    return known


def _compute(snapshot: AlignmentSnapshot, elapsed_ms: Callable[[], int]) -> None:
    run_ids = _run_ids_for_scope(snapshot.scope)
    runs = JudgeRun.objects.filter(id__in=run_ids)
    latest = runs.aggregate(m=Max("finished_at"))["m"]
    report = selectors.alignment_report(
        run_ids=run_ids,
        by_reviewer=True,
        previous_per_reviewer=_known_sections(
            snapshot.scope, reviewer_ids=set(runs.values_list("reviewer_id", flat=True))
        ),
    )
    per_reviewer = report.pop("per_reviewer", {})
    points = [{"kind": r["kind"], "k": r["k"], "points": r["points"]} for r in report["reasoning"]]
    report["reasoning"] = [
        {
            **r,
            "n_points": len(r["points"]),
            "points": sample_points(r["points"], limit=REASONING_SHOWN),
        }
        for r in report["reasoning"]
    ]
    ALIGNMENT.done(
        snapshot.id,
        elapsed_ms,
        run_ids=run_ids,
        latest_run_at=latest,
        n_finals=report["n_finals"],
        n_predictions=report.get("n_predictions", 0),
        result=report,
        per_reviewer=per_reviewer,
        reasoning_points=points,
    )
