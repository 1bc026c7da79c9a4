"""Large uploads imported by the worker (issue 29.2: "any upload up to the cap: the web process
under 600 MB and answered within 10 s").

A 97.6 MB ratings CSV imported inside the web request held the request for 35 s and took the
web process to 586 MB (the frames pandas builds). Above IMPORT_BACKGROUND_BYTES the web process
now only

1. refuses what is obviously not an import file, at once and naming the field: the checks on
   the file's bytes the importers run first anyway (empty, file type, header width, line
   length: apps.catalog.importers.common);
2. copies the upload, chunk by chunk and at most IMPORT_MAX_BYTES, to a spool file in
   IMPORT_SPOOL_DIR (a folder the web and the worker share);
3. stores an ImportJob and sends `catalog.import_job_execute` after the commit,

and the worker calls the one entry point, `import_file`, on the spool file.

Every delivery of the task may run twice (acks_late; the reclaim below):

- a job is claimed by a conditional UPDATE that takes a lease (a token, a heartbeat); the
  heartbeat and the progress (bytes of the file read) are written once a second from a thread
  with its own database connection, since the import's transaction is open the whole time;
- the import is all or nothing as before, and the job's outcome is written in the same
  transaction, only while the lease is still this worker's: a killed worker leaves neither
  records nor a "succeeded" job, and a worker whose lease was taken over rolls its import back;
- records are upserted by their natural key, so an import that runs again after a crash
  stores exactly what one run stores.

`import_jobs_reclaim` (Celery beat, every IMPORT_RECLAIM_SECONDS) sends again the jobs whose
worker died (heartbeat older than IMPORT_LEASE_SECONDS) or whose message was lost (queued
longer than IMPORT_REQUEUE_AFTER_SECONDS), fails a job after IMPORT_JOB_MAX_ATTEMPTS, and deletes
spool files: those of ended jobs, and any left by a web process that died before its job was
stored (older than IMPORT_SPOOL_STALE_SECONDS).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any

from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Now
from django.utils import timezone

from apps.catalog.importers.common import (
    file_format,
    is_empty,
    refuse_long_lines,
    refuse_wide_header,
)
from apps.catalog.models import ImportJob
from apps.catalog.services.imports import (
    IMPORT_KINDS,
    UploadOutcome,
    import_file,
    import_upload,
)
from apps.core.errors import ApplicationError, FieldError, PermissionDenied

__all__ = [
    "EXECUTE_TASK",
    "TooManyImportJobs",
    "import_job_execute",
    "import_job_start",
    "import_jobs_reclaim",
    "import_upload_or_queue",
    "spool_path",
]

logger = logging.getLogger(__name__)

EXECUTE_TASK = "catalog.import_job_execute"
# Bytes copied at a time from the upload to the spool file.
SPOOL_CHUNK = 1 << 20
# Seconds between two writes of the heartbeat and the progress.
PROGRESS_EVERY_SECONDS = 1.0
PART_SUFFIX = ".part"
TABULAR_KINDS = ("patents", "ideas", "reviewers", "ratings")


class TooManyImportJobs(ApplicationError):
    """The admin already has IMPORT_MAX_ACTIVE_JOBS imports waiting or running (429)."""


class LeaseLost(Exception):
    """Another worker took the job over (ours looked dead): this import is rolled back."""


def spool_dir() -> Path:
    return Path(settings.IMPORT_SPOOL_DIR)


def spool_path(job: ImportJob) -> Path | None:
    return spool_dir() / job.spool_name if job.spool_name else None


# --------------------------------------------------------------------------- the web's part


def import_job_start(
    *,
    kind: str,
    upload: IO[bytes],
    filename: str,
    size: int,
    actor: Any,
    dry_run: bool = False,
    make_default: bool = False,
    domains: Sequence[str] = (),
    create_domains: bool = False,
) -> ImportJob:
    """Check the upload's shape, spool it and queue its import; raises ApplicationError (the
    same refusals as `import_file`, naming the field) or TooManyImportJobs."""
    if kind not in IMPORT_KINDS:
        raise ApplicationError(
            "Unknown import kind.",
            errors=[
                FieldError(
                    field="kind", message="must be one of: " + ", ".join(IMPORT_KINDS), value=kind
                )
            ],
        )
    if not getattr(actor, "is_admin", False):
        raise PermissionDenied("Only admins import data.")
    if is_empty(upload):
        raise ApplicationError(
            "The file is empty.",
            errors=[FieldError(field="file", message="is empty", value=filename)],
        )
    if kind in TABULAR_KINDS:
        # The same checks, in the same order, as apps.catalog.importers.common.read_table: a
        # file refused here would be refused by the worker with the same errors.
        if file_format(filename, allowed=("csv", "jsonl")) == "csv":
            refuse_wide_header(upload)
        refuse_long_lines(upload)
    limit = int(settings.IMPORT_MAX_ACTIVE_JOBS)
    active = ImportJob.objects.filter(created_by=actor, status__in=ImportJob.ACTIVE).count()
    if active >= limit:
        raise TooManyImportJobs(
            "Too many imports are waiting; nothing was imported.",
            errors=[
                FieldError(
                    field="file",
                    message=f"you have {active} imports queued or running; at most {limit} "
                    "(IMPORT_MAX_ACTIVE_JOBS): wait for one to finish",
                    value=filename,
                )
            ],
        )
    name = _spool(upload, filename)
    try:
        with transaction.atomic():
            job = ImportJob.objects.create(
                kind=kind,
                options={
                    "dry_run": dry_run,
                    "make_default": make_default,
                    "domains": list(domains),
                    "create_domains": create_domains,
                },
                created_by=actor,
                filename=filename[:255],
                size=size,
                spool_name=name,
            )
            transaction.on_commit(lambda: _send(job.id))
    except BaseException:
        (spool_dir() / name).unlink(missing_ok=True)
        raise
    logger.info("import job %s queued: %s %s (%s bytes)", job.id, kind, filename, size)
    return job


def _spool(upload: IO[bytes], filename: str) -> str:
    """Copy the upload to a new spool file, at most IMPORT_MAX_BYTES; returns its name. Written
    under a .part name and renamed when complete, so the worker never sees half a file."""
    limit = int(settings.IMPORT_MAX_BYTES)
    folder = spool_dir()
    folder.mkdir(parents=True, exist_ok=True)
    name = uuid.uuid4().hex + ".upload"
    part = folder / (name + PART_SUFFIX)
    written = 0
    try:
        upload.seek(0)
        with part.open("xb") as out:
            while chunk := upload.read(SPOOL_CHUNK):
                written += len(chunk)
                if written > limit:
                    raise ApplicationError(
                        "The file is too large; nothing was imported.",
                        errors=[
                            FieldError(
                                field="file",
                                message=f"is more than {limit} bytes (IMPORT_MAX_BYTES): split "
                                "it into several files",
                                value=filename,
                            )
                        ],
                    )
                out.write(chunk)
        os.replace(part, folder / name)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    finally:
        upload.seek(0)
    return name


def _send(job_id: int) -> None:
    """Send the job to a worker. A broker that cannot be reached leaves the job queued (logged);
    the reclaim sends it again after IMPORT_REQUEUE_AFTER_SECONDS."""
    try:
        current_app.send_task(
            EXECUTE_TASK, args=(job_id,), queue=current_app.conf.task_default_queue
        )
    except Exception:  # kombu raises several types for an unreachable broker
        logger.exception("could not enqueue import job %s", job_id)


# --------------------------------------------------------------------------- the worker's part


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


# --------------------------------------------------------------------------- the periodic job


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
            transaction.on_commit(functools.partial(_send, job_id))
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


# --------------------------------------------------------------------------- the web's adapter


def import_upload_or_queue(
    *,
    kind: str,
    upload: Any,
    actor: Any,
    dry_run: bool = False,
    make_default: bool = False,
    domains: Sequence[str] = (),
    create_domains: bool = False,
) -> UploadOutcome:
    """What the import page, the API and the Django admin call for an upload: up to
    IMPORT_BACKGROUND_BYTES (and past IMPORT_MAX_BYTES, to refuse it) the synchronous
    `imports.import_upload`, unchanged; between them a queued job. Never raises."""
    filename = upload.name or ""
    size = int(getattr(upload, "size", 0) or 0)
    if size <= int(settings.IMPORT_BACKGROUND_BYTES) or size > int(settings.IMPORT_MAX_BYTES):
        return import_upload(
            kind=kind,
            upload=upload,
            actor=actor,
            dry_run=dry_run,
            make_default=make_default,
            domains=domains,
            create_domains=create_domains,
        )
    try:
        job = import_job_start(
            kind=kind,
            upload=upload,
            filename=filename,
            size=size,
            actor=actor,
            dry_run=dry_run,
            make_default=make_default,
            domains=domains,
            create_domains=create_domains,
        )
    except ApplicationError as exc:
        return UploadOutcome(
            ok=False,
            filename=filename,
            message=exc.message,
            errors=exc.errors,
            throttled=isinstance(exc, TooManyImportJobs),
        )
    return UploadOutcome(ok=True, filename=filename, job=job)
