import pytest

from apps.decisions.models import DecisionSnapshot
from apps.decisions.services import decisions_mark_stale, decisions_request_recompute
from tests.disagreement.conftest import plant_ratings
from tests.factories import DomainFactory
from tests.workers import wait_for


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_fits_the_model_and_a_burst_of_changes_queues_one_recompute(
    celery_worker, manager
):
    plant_ratings(domains=[DomainFactory(key="nlp", name="NLP")], n_ideas=15, n_reviewers=4)
    snapshot = decisions_request_recompute(actor=manager)
    # Rating changes while it waits join the same queued row (the debounce).
    decisions_mark_stale()
    decisions_mark_stale()
    assert DecisionSnapshot.objects.filter(status=DecisionSnapshot.Status.QUEUED).count() <= 1

    def done() -> bool:
        snapshot.refresh_from_db()
        return snapshot.is_finished

    wait_for(done, timeout=60, message=f"no result; worker log:\n{celery_worker.log()[-3000:]}")
    assert snapshot.status == DecisionSnapshot.Status.DONE, snapshot.error
    assert snapshot.slices.filter(domain="nlp", dimension="__all__").exists()
    assert snapshot.progress == 100 and snapshot.result["top_share"] == 0.1
