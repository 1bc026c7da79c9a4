"""Reads of stored alignment snapshots: the newest, pending and failed ones of a scope, staleness,
a reviewer's own section and one run's rows."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django.db import connection

from apps.core.models import SNAPSHOT_NEWEST_FIRST
from apps.judges.models import (
    AlignmentSnapshot,
    JudgeRun,
)


def alignment_snapshot_latest(*, scope: str, with_points: bool = False) -> AlignmentSnapshot | None:
    """The newest computed snapshot of a scope, without its per-reviewer section and (unless
    asked) without the full reasoning points: the dashboard reads one small row."""
    deferred = ["per_reviewer"] if with_points else ["per_reviewer", "reasoning_points"]
    return (
        AlignmentSnapshot.objects.filter(scope=scope, status=AlignmentSnapshot.Status.DONE)
        .defer(*deferred)
        .order_by(*SNAPSHOT_NEWEST_FIRST)
        .first()
    )


def alignment_sections(*, snapshot_id: int, keys: Sequence[str]) -> dict[str, Any]:
    """Some reviewers' sections of one snapshot ("r<id>": section), picked out by the database
    in one pass over its per_reviewer: a domain's ten of the overall scope's thousand sections
    (23 MB at a million ratings; read and parsed whole, a third of each domain's scope)."""
    if not keys:
        return {}
    each = "jsonb_each" if connection.vendor == "postgresql" else "json_each"
    wanted = ", ".join(["%s"] * len(keys))
    sql = (
        f"SELECT e.key, e.value FROM {AlignmentSnapshot._meta.db_table} s, "
        f"{each}(s.per_reviewer) e WHERE s.id = %s AND e.key IN ({wanted})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [snapshot_id, *keys])
        rows = cursor.fetchall()
    # PostgreSQL's driver parses jsonb; SQLite hands back the text.
    return {key: json.loads(value) if isinstance(value, str) else value for key, value in rows}


def alignment_last_seconds(*, scope: str) -> float:
    """How long the scope's newest computed snapshot took (0 before the first)."""
    duration = (
        AlignmentSnapshot.objects.filter(scope=scope, status=AlignmentSnapshot.Status.DONE)
        .order_by(*SNAPSHOT_NEWEST_FIRST)
        .values_list("duration_ms", flat=True)
        .first()
    )
    return (duration or 0) / 1000.0


def alignment_snapshot_pending(*, scope: str) -> AlignmentSnapshot | None:
    """A queued or running computation of the scope, if any (the page says so)."""
    return (
        AlignmentSnapshot.objects.filter(
            scope=scope,
            status__in=[AlignmentSnapshot.Status.QUEUED, AlignmentSnapshot.Status.RUNNING],
        )
        .defer("result", "per_reviewer", "reasoning_points")
        .order_by("-created_at")
        .first()
    )


def alignment_snapshot_failure(*, scope: str, after: Any = None) -> AlignmentSnapshot | None:
    qs = AlignmentSnapshot.objects.filter(scope=scope, status=AlignmentSnapshot.Status.FAILED)
    if after is not None:
        qs = qs.filter(created_at__gt=after)
    return qs.defer("result", "per_reviewer", "reasoning_points").order_by("-created_at").first()


def alignment_snapshot_is_stale(snapshot: AlignmentSnapshot) -> bool:
    """True when a run of the scope finished after the newest run the snapshot read."""
    if snapshot.scope.startswith("run-"):
        return False
    qs = JudgeRun.objects.filter(
        purpose=JudgeRun.Purpose.LOO_EVALUATION, status=JudgeRun.Status.DONE
    )
    if "|" in snapshot.scope:
        qs = qs.filter(domain__key=snapshot.scope.split("|", 1)[1])
    if snapshot.latest_run_at is not None:
        qs = qs.filter(finished_at__gt=snapshot.latest_run_at)
    return qs.exists()


def reviewer_alignment(*, reviewer_id: int) -> tuple[AlignmentSnapshot | None, dict[str, Any]]:
    """A reviewer's own section of the newest "auto" snapshot: (snapshot, section or {})."""
    key = f"r{int(reviewer_id)}"
    row = (
        AlignmentSnapshot.objects.filter(scope="auto", status=AlignmentSnapshot.Status.DONE)
        .order_by(*SNAPSHOT_NEWEST_FIRST)
        .values("id", f"per_reviewer__{key}")
        .first()
    )
    if row is None:
        return None, {}
    snapshot = AlignmentSnapshot.objects.defer("result", "per_reviewer", "reasoning_points").get(
        id=row["id"]
    )
    return snapshot, row[f"per_reviewer__{key}"] or {}


def run_alignment_rows(run: JudgeRun) -> tuple[AlignmentSnapshot | None, list[dict[str, Any]]]:
    """The stored alignment of one finished run: a study's own snapshot, or the reviewer's rows
    of the newest "auto" snapshot that read this evaluation run."""
    if run.purpose == JudgeRun.Purpose.STUDY:
        snapshot = alignment_snapshot_latest(scope=f"run-{run.id}")
        return snapshot, (snapshot.result or {}).get("curve", []) if snapshot else []
    if run.purpose != JudgeRun.Purpose.LOO_EVALUATION or run.reviewer_id is None:
        return None, []
    key = f"r{run.reviewer_id}"
    # JSON containment is not available on SQLite (the demo): test membership here instead.
    # Only the newest few snapshots are kept per scope (services.alignment.ALIGNMENT.keep).
    candidates = (
        AlignmentSnapshot.objects.filter(scope="auto", status=AlignmentSnapshot.Status.DONE)
        .order_by(*SNAPSHOT_NEWEST_FIRST)
        .values_list("id", "run_ids")
    )
    found = next((sid for sid, ids in candidates if run.id in (ids or [])), None)
    if found is None:
        return None, []
    row = AlignmentSnapshot.objects.filter(id=found).values("id", f"per_reviewer__{key}").first()
    if row is None:
        return None, []
    snapshot = AlignmentSnapshot.objects.defer("result", "per_reviewer", "reasoning_points").get(
        id=row["id"]
    )
    section = row[f"per_reviewer__{key}"] or {}
    dims = set(run.dimensions or [])
    return snapshot, [r for r in section.get("curve", []) if not dims or r["dimension"] in dims]
