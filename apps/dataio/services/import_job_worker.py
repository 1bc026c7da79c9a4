"""The worker's side of an import job (apps.dataio.services.import_jobs has the web's side and
the rules both keep): claim the job under a lease, import the spool file through `import_file`
while a thread writes the heartbeat and the progress, record the outcome in the import's own
transaction; and the periodic reclaim that resends jobs whose worker died or whose message was
lost and deletes spool files nobody will read."""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
import uuid
from datetime import datetime, timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Now
from django.utils import timezone

from apps.catalog.models import ImportJob
from apps.core.errors import ApplicationError, FieldError
from apps.core.leases import LeaseLost
from apps.dataio.services.import_jobs import send_import_job, spool_dir, spool_path
from apps.dataio.services.imports import import_file

__all__ = ["import_job_execute", "import_jobs_reclaim"]

logger = logging.getLogger(__name__)

# How often the heartbeat thread writes the lease and the bytes read so far.
PROGRESS_EVERY_SECONDS = 1.0


def lease_seconds() -> float:
    """How long a running job's heartbeat may be silent before its worker counts as dead.

    SQLite (the embedded demo) lets one connection write at a time, so no heartbeat can be
    written while the import's transaction is open: there the lease is the task's time limit."""
    if connection.vendor == "sqlite":
        return float(max(settings.IMPORT_LEASE_SECONDS, settings.CELERY_TASK_TIME_LIMIT))
    return float(settings.IMPORT_LEASE_SECONDS)


def lease_expired_before() -> datetime:
    return timezone.now() - timedelta(seconds=lease_seconds())


class _Heartbeat(threading.Thread):
    """Writes the lease's heartbeat and the bytes read so far, once a second, from its own
    database connection (the import's transaction holds the worker's). The position is the
    spool file's OS offset, read without touching the file object the import uses."""

    def __init__(self, *, job_id: int, token: str, fd: int) -> None:
        super().__init__(name=f"import-job-{job_id}-heartbeat", daemon=True)
        self.job_id = job_id
        self.token = token
        self.fd = fd
        self.stopped = threading.Event()

    def run(self) -> None:
        from django.db import connection as own_connection

        try:
            while not self.stopped.wait(PROGRESS_EVERY_SECONDS):
                try:
                    position = os.lseek(self.fd, 0, os.SEEK_CUR)
                    ImportJob.objects.filter(
                        id=self.job_id, lease_token=self.token, status=ImportJob.Status.RUNNING
                    ).update(heartbeat_at=Now(), bytes_read=position)
                except (OSError, DatabaseError):
                    # The file was closed, or the database is briefly away: the next beat tries
                    # again; a worker that cannot beat for a whole lease is reclaimed.
                    logger.warning("import job %s: heartbeat not written", self.job_id)
        finally:
            own_connection.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=10)


def _claim(job_id: int, token: str) -> bool:
    """Take a queued job (or one whose worker stopped beating) under a new lease."""
    return bool(
        ImportJob.objects.filter(id=job_id)
        .filter(
            Q(status=ImportJob.Status.QUEUED)
            | Q(status=ImportJob.Status.RUNNING, heartbeat_at__lt=lease_expired_before())
        )
        .update(
            status=ImportJob.Status.RUNNING,
            lease_token=token,
            heartbeat_at=Now(),
            started_at=Now(),
            bytes_read=0,
            attempts=F("attempts") + 1,
        )
    )


def import_job_execute(*, job_id: int) -> str:
    """Run one import job on this worker; returns its status. Safe to call twice: a job that
    ended, or that another worker holds, is left alone."""
    token = uuid.uuid4().hex
    if not _claim(job_id, token):
        status = ImportJob.objects.filter(id=job_id).values_list("status", flat=True).first()
        return status or "missing"
    job = ImportJob.objects.select_related("created_by").get(id=job_id)
    path = spool_path(job)
    if job.created_by is None:
        return _fail(job, token, "The account that uploaded the file was deleted.", [])
    if path is None or not path.exists():
        return _fail(
            job,
            token,
            "The uploaded file is no longer on the server; upload it again.",
            [FieldError(field="file", message="is gone from IMPORT_SPOOL_DIR", value=job.filename)],
        )
    options = job.options or {}
    try:
        with path.open("rb") as file:
            beat = None
            if connection.vendor != "sqlite":
                beat = _Heartbeat(job_id=job.id, token=token, fd=file.fileno())
                beat.start()
            try:
                with transaction.atomic():
                    result = import_file(
                        kind=job.kind,
                        content=file,
                        filename=job.filename,
                        actor=job.created_by,
                        dry_run=bool(options.get("dry_run")),
                        make_default=bool(options.get("make_default")),
                        domains=[str(d) for d in options.get("domains") or []],
                        create_domains=bool(options.get("create_domains")),
                    )
                    stored = ImportJob.objects.filter(
                        id=job.id, lease_token=token, status=ImportJob.Status.RUNNING
                    ).update(
                        status=ImportJob.Status.SUCCEEDED,
                        result={**result.as_dict(), "summary": result.summary()},
                        bytes_read=job.size,
                        finished_at=Now(),
                        message="",
                        errors=[],
                    )
                    if not stored:
                        raise LeaseLost(f"import job {job.id}")
            finally:
                if beat is not None:
                    beat.stop()
    except LeaseLost:
        logger.warning("import job %s: taken over by another worker; rolled back", job.id)
        return "lost"
    except ApplicationError as exc:
        return _fail(job, token, exc.message, exc.errors)
    except SoftTimeLimitExceeded:
        return _fail(
            job,
            token,
            "The import took longer than the worker's time limit (CELERY_TASK_SOFT_TIME_LIMIT); "
            "nothing was imported. Split the file into several files.",
            [],
        )
    _delete_spool(job)
    logger.info("import job %s succeeded: %s", job.id, result.summary())
    return ImportJob.Status.SUCCEEDED


def _fail(job: ImportJob, token: str, message: str, errors: list[FieldError]) -> str:
    ImportJob.objects.filter(id=job.id, lease_token=token, status=ImportJob.Status.RUNNING).update(
        status=ImportJob.Status.FAILED,
        message=message,
        errors=[e.as_dict() for e in errors],
        finished_at=Now(),
    )
    _delete_spool(job)
    logger.info("import job %s failed: %s (%s problems)", job.id, message, len(errors))
    return ImportJob.Status.FAILED


def _delete_spool(job: ImportJob) -> None:
    path = spool_path(job)
    if path is not None:
        path.unlink(missing_ok=True)
    ImportJob.objects.filter(id=job.id).exclude(status__in=ImportJob.ACTIVE).update(spool_name="")


def import_jobs_reclaim() -> dict[str, int]:
    """Periodic (Celery beat): resend jobs whose worker died or whose message was lost; fail
    those that used up their attempts; delete spool files nobody will read. Returns counts."""
    now = timezone.now()
    max_attempts = int(settings.IMPORT_JOB_MAX_ATTEMPTS)
    lost_before = now - timedelta(seconds=float(settings.IMPORT_REQUEUE_AFTER_SECONDS))
    with transaction.atomic():
        stale = list(
            ImportJob.objects.select_for_update(skip_locked=True)
            .filter(status=ImportJob.Status.RUNNING, heartbeat_at__lt=lease_expired_before())
            .values_list("id", "attempts")
        )
        exhausted = [job_id for job_id, attempts in stale if attempts >= max_attempts]
        resend = [job_id for job_id, attempts in stale if attempts < max_attempts]
        lost = list(
            ImportJob.objects.select_for_update(skip_locked=True)
            .filter(status=ImportJob.Status.QUEUED, updated_at__lt=lost_before)
            .values_list("id", flat=True)
        )
        if exhausted:
            ImportJob.objects.filter(id__in=exhausted).update(
                status=ImportJob.Status.FAILED,
                message=f"The worker stopped {max_attempts} times while importing this file "
                "(IMPORT_JOB_MAX_ATTEMPTS; it may need more memory than the worker has); "
                "nothing was imported.",
                finished_at=now,
            )
        if resend:
            # Queued again (the lease is dropped): the next delivery claims it like a new job.
            ImportJob.objects.filter(id__in=resend).update(
                status=ImportJob.Status.QUEUED, lease_token="", updated_at=now
            )
        if lost:
            ImportJob.objects.filter(id__in=lost).update(updated_at=now)
        for job_id in [*resend, *lost]:
            transaction.on_commit(functools.partial(send_import_job, job_id))
    deleted = _clean_spool(now)
    counts = {
        "resent": len(resend),
        "lost": len(lost),
        "failed": len(exhausted),
        "spool_deleted": deleted,
    }
    if any(counts.values()):
        logger.info("import jobs reclaimed: %s", counts)
    return counts


def _clean_spool(now: datetime) -> int:
    """Delete the spool files of ended jobs, and files no job names that are older than
    IMPORT_SPOOL_STALE_SECONDS (a web process that died between writing one and storing its
    job; a .part left by a broken upload)."""
    deleted = 0
    for job in ImportJob.objects.exclude(status__in=ImportJob.ACTIVE).exclude(spool_name=""):
        _delete_spool(job)
        deleted += 1
    folder = spool_dir()
    if not folder.is_dir():
        return deleted
    wanted = set(
        ImportJob.objects.filter(status__in=ImportJob.ACTIVE).values_list("spool_name", flat=True)
    )
    stale_before = time.time() - float(settings.IMPORT_SPOOL_STALE_SECONDS)
    for path in folder.iterdir():
        if path.name in wanted or not path.is_file():
            continue
        try:
            if path.stat().st_mtime < stale_before:
                path.unlink()
                deleted += 1
        except FileNotFoundError:
            continue
    return deleted
