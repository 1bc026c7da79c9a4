"""Storing predictions and finals through COPY keeps exactly what bulk_create stored (issue 28,
item 3)."""

from __future__ import annotations

import pytest
from django.db import connection

from apps.core import bulk_upsert
from apps.core.bulk_upsert import COPY_MIN_ROWS
from apps.judges.models import JudgeConfig, JudgeFinal, JudgePrediction, JudgeRun
from apps.judges.services.finals import finalize_run
from apps.judges.services.prediction_store import predictions_upsert
from apps.screening.models import Dimension
from tests.factories import ReviewerFactory
from tests.judges.helpers import make_ideas

pytestmark = pytest.mark.django_db

COMPARED = [
    f.attname
    for f in JudgePrediction._meta.concrete_fields
    if f.attname not in ("id", "run_id", "created_at")
]


def _run(domain) -> JudgeRun:
    return JudgeRun.objects.create(
        purpose="prediction",
        domain=domain,
        dimensions=["innovativeness"],
        shots=[],
        status="done",  # one active run per scope: these two are finished
    )


def _rows(run, reviewers, ideas, dimension, config, *, score_shift: int = 0):
    rows = []
    for r_i, reviewer in enumerate(reviewers):
        for i, idea in enumerate(ideas):
            rows.append(
                dict(
                    run_id=run.id,
                    config_id=config.id,
                    kind="personalized",
                    k=9,
                    seed=0,
                    reviewer_id=reviewer.id,
                    idea_id=idea.id,
                    dimension_id=dimension.id,
                    score=None if i % 17 == 0 else 1 + (i + r_i + score_shift) % 5,
                    reason=f'because {i}, "quoted"\ttab\nline' if i % 3 else "",
                    confidence=None if i % 11 == 0 else i % 100,
                    raw_confidence=i % 100,
                    signal="panel" if i % 2 else "text",
                    panel_size=i % 7,
                    level_score=3,
                    model="offline",
                    backend="local",
                    response_mode="",
                    prompt_fingerprint="f" * 64,
                    example_rating_ids=[i, i + 1, 2**40] if i % 5 else [],
                    raw_reply='{"score": 3, "note": "ünïcode \\\\ back"}',
                    prompt_tokens=i,
                    completion_tokens=2 * i,
                    cached_tokens=0,
                    latency_ms=i % 1000,
                    attempts=1,
                    error="" if i % 13 else "timeout",
                )
            )
    return rows


def _stored(run) -> list[tuple]:
    return sorted(
        JudgePrediction.objects.filter(run=run).values_list(*COMPARED),
        key=lambda row: (row[COMPARED.index("reviewer_id")], row[COMPARED.index("idea_id")]),
    )


@pytest.fixture
def batch(domain):
    ideas = make_ideas(domain, 120)
    reviewers = [ReviewerFactory(profile=[domain]) for _ in range(2)]
    dimension = Dimension.objects.get(rubric__is_default=True, key="innovativeness")
    config = JudgeConfig.objects.create(name="p", kind="personalized", backend="local")
    return reviewers, ideas, dimension, config


def test_copy_stores_the_same_rows_as_bulk_create_and_updates_conflicts_alike(
    domain, batch, monkeypatch
):
    assert connection.vendor == "postgresql"
    reviewers, ideas, dimension, config = batch
    by_copy, by_orm = _run(domain), _run(domain)
    rows = _rows(by_copy, reviewers, ideas, dimension, config)
    assert len(rows) >= COPY_MIN_ROWS  # the COPY path
    copied = []
    real_copy = bulk_upsert._copy

    def counted(model, rows, **kw):
        copied.append(len(rows))
        return real_copy(model, rows, **kw)

    monkeypatch.setattr(bulk_upsert, "_copy", counted)
    predictions_upsert(rows)
    assert copied == [len(rows)]
    monkeypatch.setattr(bulk_upsert, "COPY_MIN_ROWS", 10**9)  # the bulk_create path
    predictions_upsert(_rows(by_orm, reviewers, ideas, dimension, config))
    assert copied == [len(rows)]
    assert _stored(by_copy) == _stored(by_orm)
    assert len(_stored(by_copy)) == 240

    # A second store of the same keys (a duplicated task) updates, never duplicates.
    monkeypatch.setattr(bulk_upsert, "COPY_MIN_ROWS", COPY_MIN_ROWS)
    predictions_upsert(_rows(by_copy, reviewers, ideas, dimension, config, score_shift=1))
    monkeypatch.setattr(bulk_upsert, "COPY_MIN_ROWS", 10**9)
    predictions_upsert(_rows(by_orm, reviewers, ideas, dimension, config, score_shift=1))
    assert _stored(by_copy) == _stored(by_orm)
    assert JudgePrediction.objects.filter(run=by_copy).count() == 240
    assert JudgePrediction.objects.filter(run=by_copy, created_at__isnull=True).count() == 0


def test_two_copy_batches_in_one_transaction_each_store_their_own_rows(domain, batch):
    reviewers, ideas, dimension, config = batch
    run = _run(domain)
    rows = _rows(run, reviewers, ideas, dimension, config)
    predictions_upsert(rows[:200])  # the test's transaction stays open between the two
    predictions_upsert(rows[200:] + rows[:200])
    assert JudgePrediction.objects.filter(run=run).count() == 240


def test_calibrated_confidences_written_from_arrays_reach_exactly_their_rows(domain, batch):
    """The evaluation's calibration writes many confidences in one statement on PostgreSQL:
    each row gets its own value, rows not named keep theirs."""
    from apps.judges.services.calibration import _update_confidences_postgresql

    reviewers, ideas, dimension, config = batch
    run = _run(domain)
    predictions_upsert(_rows(run, reviewers, ideas, dimension, config))
    ids = list(JudgePrediction.objects.filter(run=run).order_by("id").values_list("id", flat=True))
    before = dict(JudgePrediction.objects.filter(run=run).values_list("id", "confidence"))
    changed = {77: ids[0:100:2], 5: ids[1:100:2]}
    _update_confidences_postgresql(changed)
    after = dict(JudgePrediction.objects.filter(run=run).values_list("id", "confidence"))
    for value, named in changed.items():
        assert all(after[pid] == value for pid in named)
    assert all(after[pid] == before[pid] for pid in ids[100:])


def _finals(run) -> list[tuple]:
    fields = [f.attname for f in JudgeFinal._meta.concrete_fields]
    compared = [f for f in fields if f not in ("id", "run_id", "created_at")]
    return sorted(JudgeFinal.objects.filter(run=run).values_list(*compared))


def test_finals_stored_through_copy_are_the_ones_bulk_create_stores(domain, batch, monkeypatch):
    """A finished run's finals go through the same upsert: COPY for a large run, and a run
    finalised twice (a retried task) updates its finals, never duplicates them."""
    reviewers, ideas, dimension, config = batch
    by_copy, by_orm = (
        JudgeRun.objects.create(
            purpose="loo_evaluation",
            domain=domain,
            dimensions=["innovativeness"],
            shots=[],
            status="done",
        )
        for _ in range(2)
    )
    for run in (by_copy, by_orm):
        run.configs.add(config)
        for seed in range(3):  # three seeds that disagree now and then: a vote to take
            rows = _rows(run, reviewers, ideas, dimension, config, score_shift=seed % 2)
            predictions_upsert([{**row, "seed": seed} for row in rows])
    copied = []
    real_copy = bulk_upsert._copy

    def counted(model, rows, **kw):
        copied.append((model, kw.get("into_table", False)))
        return real_copy(model, rows, **kw)

    monkeypatch.setattr(bulk_upsert, "_copy", counted)
    finalize_run(by_copy)
    assert copied == [(JudgeFinal, True)]  # new finals: straight into the table
    monkeypatch.setattr(bulk_upsert, "COPY_MIN_ROWS", 10**9)
    finalize_run(by_orm)
    assert copied == [(JudgeFinal, True)]
    assert len(_finals(by_copy)) == 240
    assert _finals(by_copy) == _finals(by_orm)
    scores = set(JudgeFinal.objects.filter(run=by_copy).values_list("score", flat=True))
    assert len(scores - {None}) > 1  # votes were taken, not all discarded

    monkeypatch.setattr(bulk_upsert, "COPY_MIN_ROWS", COPY_MIN_ROWS)
    finalize_run(by_copy)
    # Stored already: the straight COPY fails on the key and the batch is upserted instead.
    assert copied[1:] == [(JudgeFinal, True), (JudgeFinal, False)]
    assert JudgeFinal.objects.filter(run=by_copy).count() == 240
    assert _finals(by_copy) == _finals(by_orm)


def test_rows_expected_new_that_collide_with_stored_ones_are_upserted_and_nothing_is_lost(
    domain, batch
):
    """`expect_new` copies straight into the table; a batch holding one key stored meanwhile (a
    chunk taken over by a second worker) is rolled back to its savepoint and upserted, and the
    rows stored earlier in the same transaction stay."""
    reviewers, ideas, dimension, config = batch
    run = _run(domain)
    rows = _rows(run, reviewers, ideas, dimension, config)
    predictions_upsert(rows[:100], expect_new=True)
    predictions_upsert(rows[100:200], expect_new=True)
    again = [{**row, "score": 0} for row in rows[150:151]]  # stored with 1 to 5 or none
    predictions_upsert(again + rows[200:], expect_new=True)
    stored = JudgePrediction.objects.filter(run=run)
    assert stored.count() == 240
    key = {f: rows[150][f"{f}_id"] for f in ("reviewer", "idea", "dimension")}
    assert (
        stored.get(**key, kind=rows[150]["kind"], k=rows[150]["k"], seed=rows[150]["seed"]).score
        == 0
    )


def test_a_field_left_out_gets_what_the_orm_gives_it_on_both_paths(domain, batch, monkeypatch):
    """A row without its reason (text, no default: "") and its configuration (nullable: None)
    stores the same by COPY as by bulk_create, where COPY once sent NULL into the text column."""
    reviewers, ideas, dimension, config = batch
    by_copy, by_orm = _run(domain), _run(domain)

    def thin(run):
        rows = _rows(run, reviewers, ideas, dimension, config)[:5]
        return [{k: v for k, v in r.items() if k not in ("reason", "config_id")} for r in rows]

    predictions_upsert(thin(by_copy))
    monkeypatch.setattr(bulk_upsert, "COPY_MIN_ROWS", 10**9)
    predictions_upsert(thin(by_orm))
    assert _stored(by_copy) == _stored(by_orm)
    assert set(JudgePrediction.objects.filter(run=by_copy).values_list("reason", "config_id")) == {
        ("", None)
    }
