import pytest

from apps.disagreement.models import MetricSnapshot
from apps.disagreement.services import metrics_request_recompute
from tests.disagreement.conftest import plant_ratings
from tests.factories import DomainFactory
from tests.workers import wait_for


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_computes_a_requested_recompute(celery_worker, manager):
    ratings = plant_ratings(
        domains=[DomainFactory(key="nlp", name="NLP")], n_ideas=15, n_reviewers=4
    )
    snapshot = metrics_request_recompute(actor=manager)

    def done() -> bool:
        snapshot.refresh_from_db()
        return snapshot.is_finished

    wait_for(done, timeout=60, message=f"no result; worker log:\n{celery_worker.log()[-3000:]}")
    assert snapshot.status == MetricSnapshot.Status.DONE, snapshot.error
    assert snapshot.n_ratings == len(ratings) and snapshot.progress == 100
    assert snapshot.slices.filter(kind="pairwise").exists()
    assert {c["domain"] for c in snapshot.result["cells"]} == {"nlp", "__all__"}
