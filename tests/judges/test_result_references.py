"""Predictions and finals keep a database constraint on their run only (issue 28: the per-row
checks of the others cost more than writing the rows). Deleting a reviewer, idea or
configuration still reaches their rows, and a run that finishes after one was deleted keeps no
row naming it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction

from apps.judges.models import JudgeConfig, JudgeFinal, JudgePrediction, JudgeRun
from apps.judges.services.finals import finalize_run
from apps.judges.services.prediction_store import forget_deleted_references, predictions_upsert
from tests.factories import ReviewerFactory
from tests.judges.helpers import dimension, make_ideas

pytestmark = pytest.mark.django_db


def _run(domain) -> JudgeRun:
    return JudgeRun.objects.create(
        purpose="study", domain=domain, dimensions=["innovativeness"], shots=[]
    )


def _store(run, reviewers, ideas, config) -> None:
    dim = dimension("innovativeness")
    predictions_upsert(
        [
            dict(
                run_id=run.id,
                config_id=config.id,
                kind="personalized",
                k=2,
                seed=seed,
                reviewer_id=reviewer.id,
                idea_id=idea.id,
                dimension_id=dim.id,
                score=3,
                confidence=90,
                backend="local",
            )
            for reviewer in reviewers
            for idea in ideas
            for seed in range(3)
        ]
    )


@pytest.fixture
def stored(domain):
    config = JudgeConfig.objects.create(name="refs", kind="personalized", backend="local")
    reviewers = [ReviewerFactory(username=u, profile=[domain]) for u in ("rita", "otto")]
    ideas = make_ideas(domain, 3)
    run = _run(domain)
    _store(run, reviewers, ideas, config)
    finalize_run(run)
    return run, config, reviewers, ideas


def test_deleting_an_idea_a_reviewer_or_a_configuration_still_reaches_their_rows(stored):
    run, config, (rita, otto), (first, *rest) = stored
    assert JudgePrediction.objects.filter(run=run).count() == 2 * 3 * 3
    assert JudgeFinal.objects.filter(run=run).count() == 2 * 3

    first.delete()
    assert not JudgePrediction.objects.filter(idea_id=first.id).exists()
    assert not JudgeFinal.objects.filter(idea_id=first.id).exists()
    rita.delete()
    assert not JudgePrediction.objects.filter(reviewer_id=rita.id).exists()
    assert not JudgeFinal.objects.filter(reviewer_id=rita.id).exists()
    config.delete()
    left = JudgePrediction.objects.filter(run=run)
    assert left.count() == 1 * 2 * 3  # otto x the two other ideas x 3 seeds
    assert set(left.values_list("config_id", flat=True)) == {None}
    assert JudgeFinal.objects.filter(run=run, reviewer=otto).count() == 2


def _delete_bypassing_django(obj) -> None:
    """What the race leaves: the object gone, rows written after Django deleted its own."""
    table = connection.ops.quote_name(obj._meta.db_table)
    with connection.cursor() as cur:
        cur.execute(f"DELETE FROM {table} WHERE id = %s", [obj.id])


def test_a_finishing_run_forgets_the_rows_of_objects_deleted_while_it_ran(domain):
    config = JudgeConfig.objects.create(name="refs", kind="personalized", backend="local")
    rita = ReviewerFactory(username="rita", profile=[domain])
    otto = get_user_model().objects.create(username="otto")  # nothing else refers to him
    kept, gone = make_ideas(domain, 2)
    run = _run(domain)
    _store(run, [rita, otto], [kept, gone], config)
    _delete_bypassing_django(gone)
    _delete_bypassing_django(config)

    assert forget_deleted_references(run) == 2 * 3  # both reviewers' seeds of the gone idea
    left = JudgePrediction.objects.filter(run=run)
    assert set(left.values_list("idea_id", flat=True)) == {kept.id}
    assert set(left.values_list("config_id", flat=True)) == {None}
    assert left.count() == 2 * 3

    _delete_bypassing_django(otto)
    assert forget_deleted_references(run) == 3
    finalize_run(run)
    finals = JudgeFinal.objects.filter(run=run)
    assert list(finals.values_list("reviewer_id", "idea_id")) == [(rita.id, kept.id)]
    assert forget_deleted_references(run) == 0


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's constraints")
def test_only_the_run_is_checked_by_the_database(stored):
    run, config, (rita, _), (idea, *_) = stored
    row = dict(
        config_id=config.id,
        kind="personalized",
        k=9,
        seed=0,
        reviewer_id=rita.id,
        idea_id=idea.id,
        dimension_id=dimension("innovativeness").id,
        backend="local",
    )
    missing = 10**9
    with connection.cursor() as cur:
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")
    # Another reviewer, idea, dimension or configuration is not checked...
    JudgePrediction.objects.create(
        run=run, **{**row, "idea_id": missing, "reviewer_id": missing, "dimension_id": missing}
    )
    JudgePrediction.objects.create(run=run, **{**row, "seed": 1, "config_id": missing})
    # ... a missing run is.
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgePrediction.objects.create(run_id=missing, **row)
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgeFinal.objects.create(
            run_id=missing,
            kind="personalized",
            k=9,
            reviewer_id=rita.id,
            idea_id=idea.id,
            dimension_id=row["dimension_id"],
        )
