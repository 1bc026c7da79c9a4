"""The "newest" stored snapshot is the one whose data was read last (claimed last), not the one
that finished last: under load an older computation can finish after a newer one, and the
dashboards must not go back to the older data (seen as a flaky judges dashboard in CI)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.disagreement.models import MetricSnapshot
from apps.disagreement.selectors import snapshot_latest
from apps.judges.models import AlignmentSnapshot
from apps.judges.selectors import alignment_snapshot_latest

pytestmark = pytest.mark.django_db


def _claimed_then_finished(model, *, claimed_s: int, finished_s: int, **fields):
    now = timezone.now()
    return model.objects.create(
        status="done",
        started_at=now + timedelta(seconds=claimed_s),
        computed_at=now + timedelta(seconds=finished_s),
        **fields,
    )


def test_the_judges_dashboard_reads_the_snapshot_with_the_newest_data():
    older = _claimed_then_finished(AlignmentSnapshot, claimed_s=0, finished_s=30, scope="auto")
    newer = _claimed_then_finished(AlignmentSnapshot, claimed_s=5, finished_s=10, scope="auto")
    assert older.computed_at > newer.computed_at
    assert alignment_snapshot_latest(scope="auto") == newer


def test_the_disagreement_dashboard_reads_the_snapshot_with_the_newest_data():
    older = _claimed_then_finished(MetricSnapshot, claimed_s=0, finished_s=30, scope="auto")
    newer = _claimed_then_finished(MetricSnapshot, claimed_s=5, finished_s=10, scope="auto")
    assert older.computed_at > newer.computed_at
    assert snapshot_latest(scope="auto") == newer
