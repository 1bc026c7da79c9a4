"""An admin uploads large files on the Data & imports page in a real browser, a real Celery
worker imports them, and the panel follows the job by htmx polling to its outcome: the counts,
or every problem by row, field and value (issue 29.2)."""

from __future__ import annotations

import pytest

from apps.catalog.models import ImportJob, Patent
from apps.screening.models import Rating
from tests.catalog.conftest import EXAMPLES

pytestmark = [
    pytest.mark.browser,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
]


def test_a_large_upload_shows_its_job_until_the_worker_imported_it(
    page, login, admin, celery_worker, settings, tmp_path
):
    # The live server runs in this process: every example file counts as large here. The
    # worker reads the spool folder of the test settings, as this process does.
    settings.IMPORT_BACKGROUND_BYTES = 64
    login(admin)
    page.goto("/catalog/admin/")
    assert page.locator("#import-jobs-empty").inner_text() == "No background imports yet."

    panel = page.locator("#import-patents")
    panel.locator("input[type=file]").set_input_files(str(EXAMPLES / "patents.csv"))
    panel.get_by_role("button", name="Import patents").click()
    job = page.locator("#import-patents .catalog-job")
    job.wait_for()
    # Queued or already running: the state is named, and the partial polls until it ended.
    assert job.get_attribute("data-status") in ("queued", "running", "succeeded")
    page.locator("#import-patents .catalog-job[data-status=succeeded]").wait_for(timeout=60_000)
    assert "Imported patents (4 rows read): 4 created" in job.inner_text()
    cells = dict(
        zip(
            job.locator("tbody th").all_text_contents(),
            job.locator("tbody td").all_text_contents(),
            strict=True,
        )
    )
    assert (cells["Rows read"], cells["Created"], cells["Updated"]) == ("4", "4", "0")
    assert Patent.objects.count() == 4
    assert job.get_attribute("hx-trigger") is None, "polling stopped"

    # A file the worker refuses: every problem by row, field and value, nothing stored.
    bad = tmp_path / "ratings.csv"
    bad.write_text(
        "idea,reviewer,dimension,score\nidea-999,nobody,specificity,2\nUS404,nobody,x,9\n",
        encoding="utf-8",
    )
    ratings = page.locator("#import-ratings")
    ratings.locator("input[type=file]").set_input_files(str(bad))
    ratings.get_by_role("button", name="Import ratings").click()
    page.locator("#import-ratings .catalog-job[data-status=failed]").wait_for(timeout=60_000)
    failed = page.locator("#import-ratings .catalog-job")
    assert "The import of ratings.csv failed." in failed.inner_text()
    rows = [
        tuple(r.locator("td").all_inner_texts())
        for r in failed.locator(".catalog-error-table tbody tr").all()
    ]
    stored = ImportJob.objects.get(filename="ratings.csv").errors
    assert len(rows) == len(stored) >= 4
    assert ("2", "idea", rows[0][2], "idea-999") in rows
    assert any(r[0] == "3" and r[1] == "reviewer" and r[3] == "nobody" for r in rows)
    assert Rating.objects.count() == 0

    # The page lists both jobs, each linking its own page.
    page.goto("/catalog/admin/")
    listed = page.locator("#import-jobs tbody tr")
    assert listed.count() == 2
    assert "Failed" in listed.first.inner_text() and "Succeeded" in listed.nth(1).inner_text()
    listed.nth(1).get_by_role("link").click()
    page.locator("h1", has_text="Import job").wait_for()
    assert "Imported patents" in page.locator(".catalog-job").inner_text()
