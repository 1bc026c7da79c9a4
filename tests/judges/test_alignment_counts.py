"""The alignment's seed-prediction figures (discard rates, coverage-accuracy, models) are counted
by PostgreSQL: every case the frame they replaced handled, checked against hand counts."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.judges.engine import alignment
from apps.judges.models import JudgeConfig, JudgePrediction, JudgeRun
from apps.judges.selectors.predictions import coverage_counts, prediction_counts
from apps.screening.models import Rating

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(domain, two_reviewers_history):
    """Rita's hand-made seed predictions: her scores on ideas 0-4 are 1, 1, 2, 2, 1."""
    rita, _, ideas = two_reviewers_history
    truth = {
        r.idea_id: r
        for r in Rating.objects.filter(
            reviewer=rita, status=Rating.Status.SCORED, score__isnull=False
        )
    }
    dimension = truth[ideas[0].id].dimension
    config = JudgeConfig.objects.create(
        name="llm", kind="personalized", backend="openai", model="m", shots=[1, 2],
        confidence_threshold=50,
    )  # fmt: skip
    run = JudgeRun.objects.create(
        purpose=JudgeRun.Purpose.LOO_EVALUATION, status=JudgeRun.Status.DONE,
        finished_at=timezone.now(), scope_key="counts-test", domain=domain, reviewer=rita,
    )  # fmt: skip

    def predict(idea, *, k=2, score, confidence, config=config, backend="openai", seed=0):
        JudgePrediction.objects.create(
            run=run, config=config, kind="personalized", k=k, seed=seed, reviewer=rita,
            idea=idea, dimension=dimension, score=score, confidence=confidence,
            backend=backend, model=config.model if config else "", response_mode="",
        )  # fmt: skip

    right = {i: truth[ideas[i].id].score for i in range(5)}
    predict(ideas[0], score=right[0], confidence=90)  # kept from 0 to 90, right
    predict(ideas[1], score=3, confidence=60)  # kept to 60, wrong
    predict(ideas[2], score=right[2], confidence=40)  # discarded at 50, right
    predict(ideas[3], score=None, confidence=None)  # the call failed
    predict(ideas[4], score=right[4], confidence=None)  # scored, no confidence: discarded
    predict(ideas[0], k=1, score=right[0], confidence=30, seed=1)  # smaller k: no curve
    # Its configuration deleted (held to the default 80), on an idea Rita did not rate.
    predict(ideas[12], score=3, confidence=70, config=None, backend="local")
    return run, rita, ideas


def test_discard_rates_and_models_count_every_seed_prediction(seeded):
    run, _, _ = seeded
    counts = prediction_counts(run_ids=[run.id])
    assert int(counts["n"].sum()) == 7
    assert alignment.discard_rates(counts) == [
        {
            "domain": "nlp",
            "dimension": "innovativeness",
            "n_predictions": 7,
            "n_scored": 6,
            "n_discarded": 4,  # 40 < 50, no confidence, 30 < 50, 70 < the default 80
            "n_failed": 1,
            "discard_rate": 4 / 6,
        }
    ]
    by_model = counts.groupby(["backend", "model"])["n"].sum().to_dict()
    assert by_model == {("local", ""): 1, ("openai", "m"): 6}


def test_coverage_counts_the_predictions_the_reviewer_answered(seeded):
    run, _, _ = seeded
    counts = coverage_counts(run_ids=[run.id])
    assert int(counts["n"].sum()) == 6  # not the prediction on an idea Rita did not rate
    top = counts[counts["k"] == counts["k"].max()]
    assert int(top["n"].sum()) == 5 and set(top["threshold"]) == {50}
    points = {
        p["threshold"]: p for p in alignment.coverage_accuracy(top, thresholds=[0, 50, 80, 95])
    }
    assert (points[0]["n_kept"], points[0]["coverage"], points[0]["accuracy"]) == (3, 3 / 5, 2 / 3)
    assert (points[50]["n_kept"], points[50]["accuracy"]) == (2, 1 / 2)
    assert (points[80]["n_kept"], points[80]["accuracy"]) == (1, 1.0)
    assert (points[95]["n_kept"], points[95]["accuracy"]) == (0, None)
    assert coverage_counts(run_ids=[run.id + 1]).empty


def _finals_of(rita, domain, purpose: str, finals: list[dict]) -> tuple[JudgeRun, list]:
    """A finished run of Rita's with these finals (kind personalized, k 2, score 1, her first
    rated dimension unless given)."""
    from apps.judges.models import JudgeFinal

    run = JudgeRun.objects.create(
        purpose=purpose, status=JudgeRun.Status.DONE,
        scope_key=f"finals-{JudgeRun.objects.count()}", domain=domain, reviewer=rita,
    )  # fmt: skip
    dimension = Rating.objects.filter(reviewer=rita).first().dimension
    made = [
        JudgeFinal.objects.create(
            run=run,
            reviewer=rita,
            **{"kind": "personalized", "k": 2, "score": 1, "dimension": dimension, **fields},
        )  # fmt: skip
        for fields in finals
    ]
    return run, made


def test_final_reasons_come_back_in_the_order_asked(two_reviewers_history, domain):
    from apps.judges.selectors.predictions import final_reasons

    rita, _, ideas = two_reviewers_history
    run, finals = _finals_of(
        rita, domain, JudgeRun.Purpose.PREDICTION,
        [{"idea": idea, "reason": f"reason {n}"} for n, idea in enumerate(ideas[:3])],
    )  # fmt: skip
    ids = [finals[2].id, finals[0].id, finals[2].id]
    assert final_reasons(run_ids=[run.id], final_ids=ids) == ["reason 2", "reason 0", "reason 2"]
    assert final_reasons(run_ids=[run.id], final_ids=[]) == []


def test_final_reasons_of_one_kind_read_that_kind_only(two_reviewers_history, domain):
    from apps.judges.selectors.predictions import final_reasons

    rita, _, ideas = two_reviewers_history
    run, (personalized, aggregate) = _finals_of(
        rita, domain, JudgeRun.Purpose.PREDICTION,
        [{"kind": kind, "idea": ideas[0], "reason": f"{kind} reason"}
         for kind in ("personalized", "aggregate")],
    )  # fmt: skip
    ids = [aggregate.id, aggregate.id]
    assert final_reasons(run_ids=[run.id], final_ids=ids, kind="aggregate") == [
        "aggregate reason",
        "aggregate reason",
    ]
    # An id of another kind is not among the rows read: asking for it is an error, not a guess.
    with pytest.raises(KeyError):
        final_reasons(run_ids=[run.id], final_ids=[personalized.id], kind="aggregate")


def test_the_finals_frame_keeps_blank_signals_and_missing_scores_apart(
    two_reviewers_history, domain
):
    from apps.judges.selectors.predictions import finals_frame

    rita, _, ideas = two_reviewers_history
    rating = Rating.objects.filter(reviewer=rita, idea=ideas[0], score__isnull=False).first()
    run, _ = _finals_of(
        rita, domain, JudgeRun.Purpose.LOO_EVALUATION,
        [
            {"idea": ideas[0], "dimension": rating.dimension, "score": None, "confidence": None,
             "level_score": None, "signal": "", "reason": 'a, "quoted"\nreason', "failed": 3},
            {"kind": "zero_shot", "k": 0, "idea": ideas[1], "dimension": rating.dimension,
             "score": 2, "confidence": 90, "level_score": 1, "signal": "text", "kept": 3},
        ],
    )  # fmt: skip
    frame = finals_frame(run_ids=[run.id]).sort_values("kind").reset_index(drop=True)
    assert list(frame.columns[:8]) == [
        "reviewer_id", "reviewer", "idea_id", "domain", "dimension_id", "dimension", "kind", "k",
    ]  # fmt: skip
    assert frame["signal"].tolist() == ["", "text"]
    assert frame["kind"].tolist() == ["personalized", "zero_shot"]
    assert frame["reviewer"].tolist() == [rita.username] * 2
    assert frame["domain"].tolist() == [domain.key] * 2
    assert frame["pred"].isna().tolist() == [True, False] and frame["pred"][1] == 2.0
    assert frame["confidence"].isna().tolist() == [True, False]
    assert frame["base"].isna().tolist() == [True, False]
    assert (frame["kept"].tolist(), frame["failed"].tolist()) == ([0, 3], [3, 0])
    assert frame["truth"][0] == float(rating.score)


def test_the_finals_frame_comes_in_the_order_the_finals_were_stored(two_reviewers_history, domain):
    # A reviewer's section is found again by its rows' digest, order included: the frame must
    # not come in whatever order a scan returns (an updated row moves to the end of the table).
    from apps.judges.models import JudgeFinal
    from apps.judges.selectors.predictions import finals_frame

    rita, _, ideas = two_reviewers_history
    run, finals = _finals_of(
        rita, domain, JudgeRun.Purpose.LOO_EVALUATION, [{"idea": i} for i in reversed(ideas[:4])]
    )
    JudgeFinal.objects.filter(id=finals[0].id).update(reason="moved")
    assert finals_frame(run_ids=[run.id])["final_id"].tolist() == [f.id for f in finals]
