"""Planted ratings (from the disagreement tests) and a synchronously computed decision snapshot."""

from __future__ import annotations

import pytest

from apps.decisions.models import DecisionSnapshot
from apps.decisions.services import decisions_recompute
from tests.disagreement.conftest import plant_ratings


def compute_decisions() -> DecisionSnapshot:
    """Run the service the worker runs, on a freshly queued row."""
    snapshot = DecisionSnapshot.objects.create()
    return decisions_recompute(snapshot_id=snapshot.id)


@pytest.fixture
def planted(db, domain, other_domain):
    return plant_ratings(domains=[domain, other_domain])


@pytest.fixture
def decided(planted) -> DecisionSnapshot:
    return compute_decisions()
