"""Large uploads imported by the worker (issue 29.2: "any upload up to the cap: the web process
under 600 MB and answered within 10 s").

A 97.6 MB ratings CSV imported inside the web request held the request for 35 s and took the
web process to 586 MB (the frames pandas builds). Above IMPORT_BACKGROUND_BYTES the web process
now only

1. refuses what is obviously not an import file, at once and naming the field: the checks on
   the file's bytes the importers run first anyway (empty, file type, header width, line
   length: apps.dataio.importers.common);
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

import logging
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from celery import current_app
from django.conf import settings
from django.db import transaction

from apps.catalog.models import ImportJob
from apps.core.errors import ApplicationError, FieldError, PermissionDenied
from apps.dataio.importers.reading import file_format
from apps.dataio.importers.shape import refuse_long_lines, refuse_wide_header
from apps.dataio.importers.streams import is_empty
from apps.dataio.services.imports import (
    IMPORT_KINDS,
    UploadOutcome,
    import_upload,
)

__all__ = [
    "EXECUTE_TASK",
    "TooManyImportJobs",
    "import_job_start",
    "import_upload_or_queue",
    "send_import_job",
    "spool_dir",
    "spool_path",
]

logger = logging.getLogger(__name__)

EXECUTE_TASK = "catalog.import_job_execute"
# Bytes copied at a time from the upload to the spool file.
SPOOL_CHUNK = 1 << 20
# Seconds between two writes of the heartbeat and the progress.
PART_SUFFIX = ".part"
TABULAR_KINDS = ("patents", "ideas", "reviewers", "ratings")


class TooManyImportJobs(ApplicationError):
    """The admin already has IMPORT_MAX_ACTIVE_JOBS imports waiting or running (429)."""


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
        # The same checks, in the same order, as apps.dataio.importers.common.read_table: a
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
            transaction.on_commit(lambda: send_import_job(job.id))
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


def send_import_job(job_id: int) -> None:
    """Send the job to a worker. A broker that cannot be reached leaves the job queued (logged);
    the reclaim sends it again after IMPORT_REQUEUE_AFTER_SECONDS."""
    try:
        current_app.send_task(
            EXECUTE_TASK, args=(job_id,), queue=current_app.conf.task_default_queue
        )
    except Exception:  # kombu raises several types for an unreachable broker
        logger.exception("could not enqueue import job %s", job_id)


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
