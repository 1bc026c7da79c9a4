"""Alignment snapshots on a real Celery worker: a finished run leads to a stored snapshot that
the dashboard shows."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.judges.models import AlignmentSnapshot, JudgeRun
from tests.workers import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def test_a_finished_run_produces_an_alignment_snapshot_on_the_worker_and_the_page_reads_it(
    transactional_db, celery_worker, two_reviewers_history, request_loo, client, manager, settings
):
    settings.ALIGNMENT_DEBOUNCE_SECONDS = 0
    rita, _, _ = two_reviewers_history
    run = request_loo(rita, enqueue=True)
    wait_for(
        lambda: AlignmentSnapshot.objects.filter(status="done").count() == 2,
        timeout=90,
        message=celery_worker.log()[-3000:],
    )
    assert JudgeRun.objects.get(id=run.id).status == "done"
    snapshot = AlignmentSnapshot.objects.get(scope="auto", status="done")
    assert snapshot.run_ids == [run.id] and snapshot.n_finals > 0
    # One snapshot per scope the run feeds: every domain, and its own domain.
    assert AlignmentSnapshot.objects.get(scope="auto|nlp", status="done").run_ids == [run.id]
    row = next(r for r in snapshot.result["curve"] if r["alpha"] is not None)

    client.force_login(manager)
    page = client.get(reverse("judges:alignment")).content.decode()
    assert f'<td class="num">{row["alpha"]:.3f}</td>' in page
    assert "up to date" in page
