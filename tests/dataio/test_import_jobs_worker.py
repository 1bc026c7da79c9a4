"""Import jobs on real Celery workers (issue 29.2): a worker SIGKILLed in the middle of an import
leaves nothing written, the periodic job sends the job again, and the next worker stores the
file exactly once.

In its own module so that no other worker (tests/conftest.py's module-scoped `celery_worker`)
consumes the job."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from apps.catalog.models import ImportJob, Patent
from tests.workers import CeleryWorker, purge_queue, wait_for, worker_database_url

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

# Enough patents that the file is imported in the background and read over several heartbeats.
PATENTS = 20_000
ABSTRACT = "A sensor array calibrated in the field by a learned model of its drift. " * 8


def _patents_csv() -> bytes:
    rows = [
        f"US-{i:07d},nlp,Patent {i} for calibrating sensor arrays,{ABSTRACT}"
        for i in range(PATENTS)
    ]
    return ("external_id,domain,title,abstract\n" + "\n".join(rows) + "\n").encode()


def _job(job_id: int) -> ImportJob:
    return ImportJob.objects.get(id=job_id)


def test_a_worker_killed_mid_import_leaves_nothing_and_the_job_completes_on_the_next_worker(
    admin, tmp_path
):
    purge_queue()
    content = _patents_csv()
    assert len(content) > settings.IMPORT_BACKGROUND_BYTES
    # Short lease and reclaim so the test takes seconds; production: 60 s and 30 s.
    extra_env = {
        "IMPORT_LEASE_SECONDS": "3",
        "IMPORT_RECLAIM_SECONDS": "1",
        "IMPORT_SPOOL_DIR": str(settings.IMPORT_SPOOL_DIR),
    }
    first = CeleryWorker(extra_env=extra_env).start()
    try:
        api = APIClient()
        api.force_authenticate(admin)
        upload = SimpleUploadedFile("patents.csv", content)
        response = api.post("/api/imports/patents/", {"file": upload}, format="multipart")
        assert response.status_code == 202, response.content[:300]
        job_id = response.json()["id"]
        spool = Path(settings.IMPORT_SPOOL_DIR) / _job(job_id).spool_name
        # Killed once the file is read and the rows are being stored. The patents' table is
        # locked against writes until then, so the worker is caught storing, not done already
        # (on an idle machine it stores the file in well under a second).
        with psycopg.connect(worker_database_url()) as blocker:
            blocker.execute(f"LOCK TABLE {Patent._meta.db_table} IN SHARE MODE")
            wait_for(
                lambda: (
                    _job(job_id).status == "running" and _job(job_id).bytes_read >= len(content)
                ),
                timeout=120,
                interval=0.1,
                message=first.log()[-3000:],
            )
            time.sleep(0.5)
            assert _job(job_id).status == "running", "the import must still be running when killed"
            first.kill()
    finally:
        first.stop()
    job = _job(job_id)
    assert (job.status, job.attempts) == ("running", 1)
    assert Patent.objects.count() == 0, "a killed import leaves nothing half-written"
    assert spool.exists(), "the file waits for the next attempt"

    # The second worker runs beat (-B): the periodic job finds the stale heartbeat and sends the
    # job again; nobody re-enqueues anything by hand.
    second = CeleryWorker(
        extra_env=extra_env, extra_args=("-B", "-s", str(tmp_path / "beat-schedule"))
    ).start()
    try:
        wait_for(
            lambda: _job(job_id).status == "succeeded",
            timeout=180,
            message=second.log()[-3000:],
        )
    finally:
        second.stop()
    job = _job(job_id)
    assert job.attempts == 2
    assert (job.result["rows"], job.result["created"]) == (PATENTS, PATENTS)
    assert Patent.objects.count() == PATENTS
    assert not spool.exists(), "the spool file is deleted when the job ends"
    # A late duplicate delivery (Redis redelivering the dead worker's message) changes nothing.
    from apps.dataio.services.import_job_worker import import_job_execute

    assert import_job_execute(job_id=job_id) == "succeeded"
    assert Patent.objects.count() == PATENTS and _job(job_id).attempts == 2
