"""Large uploads become import jobs (issue 29.2): checked at once, spooled, imported by the worker
through the same `import_file`, all or nothing, and safe to run twice.

The worker's part is called in this process here (`import_job_execute`); the real worker, a
SIGKILL and the page in a browser are in test_import_jobs_worker.py and
test_import_job_browser.py. IMPORT_BACKGROUND_BYTES is lowered so the small example files count
as large."""

from __future__ import annotations

import os
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from apps.catalog.models import ImportJob, Patent
from apps.dataio.services import import_job_worker, import_jobs
from apps.dataio.services.import_job_worker import import_job_execute, import_jobs_reclaim
from apps.dataio.services.import_jobs import spool_path
from apps.screening.models import Rating
from tests.dataio.conftest import example, table_counts

pytestmark = pytest.mark.django_db

BAD_RATINGS = b"idea,reviewer,dimension,score\nidea-999,nobody,specificity,2\nidea-998,nobody,x,9\n"


@pytest.fixture(autouse=True)
def large_means_small(settings, tmp_path):
    """Every upload above 64 bytes goes to the worker; spool files in this test's folder."""
    settings.IMPORT_BACKGROUND_BYTES = 64
    settings.IMPORT_SPOOL_DIR = str(tmp_path / "spool")


@pytest.fixture
def api(admin) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin)
    return client


def post(client: APIClient, kind: str, name: str, content: bytes | None = None, **extra):
    data = {"file": SimpleUploadedFile(name, example(name) if content is None else content)}
    return client.post(f"/api/imports/{kind}/", {**data, **extra}, format="multipart")


def spool_files(settings) -> list[Path]:
    folder = Path(settings.IMPORT_SPOOL_DIR)
    return sorted(folder.iterdir()) if folder.exists() else []


def test_a_large_upload_is_answered_202_with_the_job_and_imported_by_the_worker(
    api, admin, settings
):
    response = post(api, "patents", "patents.csv")
    assert response.status_code == 202, response.content[:300]
    body = response.json()
    job = ImportJob.objects.get(id=body["id"])
    assert body["url"] == f"/api/imports/jobs/{job.id}/" == response["Location"]
    assert (body["status"], body["kind"], body["filename"]) == ("queued", "patents", "patents.csv")
    assert body["progress"]["stage"] == "waiting"
    assert job.created_by == admin and job.size == len(example("patents.csv"))
    # Nothing is imported in the request; the file waits in the spool folder.
    assert Patent.objects.count() == 0
    assert [p.name for p in spool_files(settings)] == [job.spool_name]
    assert spool_path(job).read_bytes() == example("patents.csv")

    assert import_job_execute(job_id=job.id) == "succeeded"

    body = api.get(body["url"]).json()
    assert body["status"] == "succeeded" and body["attempts"] == 1
    assert (body["result"]["rows"], body["result"]["created"]) == (4, 4)
    assert body["result"]["summary"].startswith("Imported patents (4 rows read)")
    assert body["progress"] == {
        "bytes_read": job.size,
        "size": job.size,
        "percent": 100,
        "stage": "done",
    }
    assert (body["detail"], body["errors"]) == ("", [])
    assert Patent.objects.count() == 4
    assert spool_files(settings) == [], "the spool file is deleted when the job ends"


def test_a_small_upload_is_still_imported_in_the_request(api, settings):
    settings.IMPORT_BACKGROUND_BYTES = 1024 * 1024
    response = post(api, "patents", "patents.csv")
    assert response.status_code == 201 and response.json()["created"] == 4
    assert not ImportJob.objects.exists() and Patent.objects.count() == 4


def test_a_file_of_the_wrong_shape_is_refused_at_once_naming_the_field(api, settings):
    wide = (",".join(f"c{i}" for i in range(1000)) + "\n" + "1," * 999 + "1\n").encode()
    long_line = b"external_id,domain,title\n" + b"x" * 5000 + b"\n"
    settings.IMPORT_MAX_LINE_BYTES = 1000
    cases = [
        ("ratings.csv", wide, "IMPORT_MAX_COLUMNS"),
        ("patents.csv", long_line, "IMPORT_MAX_LINE_BYTES"),
        ("patents.xlsx", b"PK" + b"\0" * 200, "use a .csv or .jsonl"),
    ]
    for name, content, said in cases:
        response = post(api, "patents", name, content)
        assert response.status_code == 400, (name, response.content[:300])
        [error] = response.json()["errors"]
        assert error["field"] == "file" and said in error["message"], error
    assert not ImportJob.objects.exists()
    assert spool_files(settings) == []


def test_a_refused_file_fails_the_job_with_every_error_and_stores_nothing(api, catalog):
    before = table_counts()
    response = post(api, "ratings", "ratings.csv", BAD_RATINGS)
    assert response.status_code == 202
    job_id = response.json()["id"]
    assert import_job_execute(job_id=job_id) == "failed"
    body = api.get(f"/api/imports/jobs/{job_id}/").json()
    assert body["status"] == "failed" and body["result"] is None
    assert "nothing was imported" in body["detail"]
    # The same FieldError list the synchronous import answers with: row, field, message, value.
    rows = {(e["row"], e["field"], e["value"]) for e in body["errors"]}
    assert (2, "idea", "idea-999") in rows and (2, "reviewer", "nobody") in rows
    assert {e["row"] for e in body["errors"]} == {2, 3}
    assert table_counts() == before


def test_a_background_dry_run_counts_and_stores_nothing(api):
    response = post(api, "patents", "patents.csv", dry_run="true")
    assert response.status_code == 202
    job_id = response.json()["id"]
    assert import_job_execute(job_id=job_id) == "succeeded"
    result = api.get(f"/api/imports/jobs/{job_id}/").json()["result"]
    assert (result["dry_run"], result["created"]) == (True, 4)
    assert Patent.objects.count() == 0


def test_running_a_job_twice_imports_it_once(api):
    job_id = post(api, "patents", "patents.csv").json()["id"]
    assert import_job_execute(job_id=job_id) == "succeeded"
    # A second delivery of the message (acks_late, a redelivery after a crash): nothing happens.
    assert import_job_execute(job_id=job_id) == "succeeded"
    job = ImportJob.objects.get(id=job_id)
    assert job.attempts == 1 and job.result["created"] == 4
    assert Patent.objects.count() == 4


@pytest.mark.django_db(transaction=True)
def test_a_worker_that_lost_its_lease_rolls_its_import_back(api, monkeypatch):
    """Another worker took the job over while this one imported (it looked dead): this one's
    records are rolled back and the job keeps the other worker's lease."""
    monkeypatch.setattr(
        import_jobs, "send_import_job", lambda job_id: None
    )  # no worker in this test
    job_id = post(api, "patents", "patents.csv").json()["id"]
    real_import = import_job_worker.import_file

    def import_then_lose_lease(**kwargs):
        result = real_import(**kwargs)

        # The other worker's claim, committed on its own connection meanwhile.
        def take_over() -> None:
            ImportJob.objects.filter(id=job_id).update(lease_token="someone-else")
            connection.close()

        other = threading.Thread(target=take_over)
        other.start()
        other.join()
        return result

    monkeypatch.setattr(import_job_worker, "import_file", import_then_lose_lease)
    assert import_job_execute(job_id=job_id) == "lost"
    assert Patent.objects.count() == 0
    job = ImportJob.objects.get(id=job_id)
    assert (job.status, job.lease_token) == ("running", "someone-else")


def test_a_job_whose_worker_died_is_sent_again_and_completes(
    api, monkeypatch, django_capture_on_commit_callbacks
):
    job_id = post(api, "patents", "patents.csv").json()["id"]
    # What a SIGKILL leaves: claimed, running, a heartbeat that stopped, nothing stored.
    ImportJob.objects.filter(id=job_id).update(
        status="running",
        lease_token="dead-worker",
        attempts=1,
        heartbeat_at=timezone.now() - timedelta(minutes=5),
    )
    assert import_job_execute(job_id=job_id) == "succeeded", "a stale lease is taken over"

    job_id = post(api, "patents", "patents.csv").json()["id"]
    ImportJob.objects.filter(id=job_id).update(
        status="running", attempts=1, heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    sent: list[int] = []
    monkeypatch.setattr(import_job_worker, "send_import_job", sent.append)
    with django_capture_on_commit_callbacks(execute=True):
        counts = import_jobs_reclaim()
    assert counts["resent"] == 1 and sent == [job_id]
    assert ImportJob.objects.get(id=job_id).status == "queued"
    assert import_job_execute(job_id=job_id) == "succeeded"
    assert ImportJob.objects.get(id=job_id).attempts == 2


def test_a_job_is_not_taken_from_a_worker_that_still_beats(api):
    job_id = post(api, "patents", "patents.csv").json()["id"]
    ImportJob.objects.filter(id=job_id).update(
        status="running", lease_token="alive", attempts=1, heartbeat_at=timezone.now()
    )
    assert import_job_execute(job_id=job_id) == "running"
    assert import_jobs_reclaim()["resent"] == 0
    assert Patent.objects.count() == 0


def test_a_job_that_kills_its_worker_every_time_fails_after_the_last_attempt(api, settings):
    settings.IMPORT_JOB_MAX_ATTEMPTS = 2
    job_id = post(api, "patents", "patents.csv").json()["id"]
    ImportJob.objects.filter(id=job_id).update(
        status="running", attempts=2, heartbeat_at=timezone.now() - timedelta(minutes=5)
    )
    assert import_jobs_reclaim()["failed"] == 1
    job = ImportJob.objects.get(id=job_id)
    assert job.status == "failed" and "IMPORT_JOB_MAX_ATTEMPTS" in job.message
    import_jobs_reclaim()
    assert ImportJob.objects.get(id=job_id).spool_name == ""


def test_the_periodic_job_deletes_spool_files_nobody_will_read(api, settings):
    settings.IMPORT_SPOOL_STALE_SECONDS = 60
    waiting = ImportJob.objects.get(id=post(api, "patents", "patents.csv").json()["id"])
    folder = Path(settings.IMPORT_SPOOL_DIR)
    orphan = folder / "0123.upload"  # a web process died before storing its job
    orphan.write_bytes(b"x")
    young = folder / "4567.upload.part"  # an upload being written right now
    young.write_bytes(b"x")
    old = time.time() - 120
    os.utime(orphan, (old, old))
    ended = ImportJob.objects.create(
        kind="patents", filename="p.csv", size=1, status="succeeded", spool_name="89ab.upload"
    )
    (folder / ended.spool_name).write_bytes(b"x")
    os.utime(folder / waiting.spool_name, (old, old))  # old, but its job still waits for it

    assert import_jobs_reclaim()["spool_deleted"] == 2
    assert sorted(p.name for p in folder.iterdir()) == sorted([waiting.spool_name, young.name])
    ended.refresh_from_db()
    assert ended.spool_name == ""


def test_an_admin_has_a_bounded_number_of_waiting_imports(api, settings):
    settings.IMPORT_MAX_ACTIVE_JOBS = 2
    assert post(api, "patents", "patents.csv").status_code == 202
    assert post(api, "patents", "patents.csv").status_code == 202
    response = post(api, "patents", "patents.csv")
    assert response.status_code == 429
    [error] = response.json()["errors"]
    assert error["field"] == "file" and "IMPORT_MAX_ACTIVE_JOBS" in error["message"]
    assert ImportJob.objects.count() == 2 and len(spool_files(settings)) == 2


def test_only_admins_post_large_files_and_read_jobs(api, reviewer, manager):
    job_id = post(api, "patents", "patents.csv").json()["id"]
    for path in (f"/api/imports/jobs/{job_id}/", "/api/imports/jobs/"):
        assert APIClient().get(path).status_code == 401
    for user in (reviewer, manager):
        client = APIClient()
        client.force_authenticate(user)
        assert post(client, "patents", "patents.csv").status_code == 403
        assert client.get(f"/api/imports/jobs/{job_id}/").status_code == 403
        assert client.get("/api/imports/jobs/").status_code == 403
    assert ImportJob.objects.count() == 1
    assert api.get("/api/imports/jobs/999999/").status_code == 404
    listed = api.get("/api/imports/jobs/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == job_id


def test_a_job_of_an_admin_who_lost_the_role_fails(api, admin):
    job_id = post(api, "patents", "patents.csv").json()["id"]
    admin.role = "manager"
    admin.save(update_fields=["role"])
    assert import_job_execute(job_id=job_id) == "failed"
    assert Patent.objects.count() == 0


# --------------------------------------------------------------------------- the import page


def test_the_page_shows_the_empty_state_then_the_job_polling_then_its_outcome(client, admin):
    client.force_login(admin)
    page = client.get(reverse("catalog:admin_home")).content.decode()
    assert "No background imports yet." in page

    upload = SimpleUploadedFile("patents.csv", example("patents.csv"))
    response = client.post(
        reverse("catalog:import_upload", args=["patents"]), {"file": upload}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    job = ImportJob.objects.get()
    panel = response.content.decode()
    status_url = reverse("catalog:import_job_status", args=[job.id])
    assert f'hx-get="{status_url}"' in panel and 'hx-trigger="every 1s"' in panel
    assert "Queued" in panel and "waiting for a worker" in panel

    ImportJob.objects.filter(id=job.id).update(status="running", bytes_read=job.size // 2)
    percent = 100 * (job.size // 2) // job.size
    running = client.get(status_url).content.decode()
    assert f"Reading the file: {percent}%" in running and "every 1s" in running
    ImportJob.objects.filter(id=job.id).update(bytes_read=job.size)
    assert "checking and storing the rows" in client.get(status_url).content.decode()
    ImportJob.objects.filter(id=job.id).update(status="queued", bytes_read=0)

    import_job_execute(job_id=job.id)
    done = client.get(status_url).content.decode()
    assert "hx-trigger" not in done, "polling stops once the job ended"
    assert "Imported patents (4 rows read)" in done and "Succeeded" in done
    page = client.get(reverse("catalog:admin_home")).content.decode()
    assert f'href="{reverse("catalog:import_job", args=[job.id])}"' in page


def test_without_javascript_the_upload_leads_to_the_jobs_page(client, admin, catalog):
    client.force_login(admin)
    upload = SimpleUploadedFile("ratings.csv", BAD_RATINGS)
    response = client.post(reverse("catalog:import_upload", args=["ratings"]), {"file": upload})
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("catalog:import_job", args=[job.id])
    import_job_execute(job_id=job.id)
    page = client.get(response["Location"]).content.decode()
    assert "The import of ratings.csv failed." in page and "idea-999" in page
    problems = client.get(reverse("catalog:import_job_errors", args=[job.id]))
    lines = b"".join(problems.streaming_content).decode().splitlines()
    assert lines[0] == "row,field,message,value" and len(lines) == 1 + len(job_errors(job.id))


def job_errors(job_id: int) -> list[dict]:
    return ImportJob.objects.get(id=job_id).errors


def test_the_django_admin_sends_a_large_file_to_the_jobs_page(client, admin):
    admin.is_staff = True
    admin.save(update_fields=["is_staff"])
    client.force_login(admin)
    upload = SimpleUploadedFile("patents.csv", example("patents.csv"))
    response = client.post(
        reverse("admin:catalog_patent_import"),
        {"kind_choice": "patents", "file": upload},
    )
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("catalog:import_job", args=[job.id])


def test_ratings_are_never_half_written_by_a_failed_job(api, reviewer_alice):
    content = example("ratings.csv").decode()
    # A bad last row: everything before it is valid, and still nothing is stored.
    content += "idea-999,alice,specificity,2\n"
    job_id = post(api, "ratings", "ratings.csv", content.encode()).json()["id"]
    assert import_job_execute(job_id=job_id) == "failed"
    assert Rating.objects.count() == 0
