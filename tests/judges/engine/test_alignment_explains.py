"""Alignment numbers that explain themselves: pure functions on small frames, no database."""

from __future__ import annotations

import numpy as np
import pandas as pd

from apps.judges.engine import alignment


def _finals(truth: list[float], pred: list[float], *, reviewer: int = 1) -> pd.DataFrame:
    n = len(truth)
    return pd.DataFrame(
        {
            "reviewer_id": [reviewer] * n,
            "idea_id": list(range(n)),
            "dimension": ["innovativeness"] * n,
            "kind": ["personalized"] * n,
            "k": [9] * n,
            "pred": pred,
            "truth": truth,
            "reason": [""] * n,
            "kept": [1] * n,
            "discarded": [0] * n,
            "failed": [0] * n,
        }
    )


def test_it_reports_coarse_metrics_as_undefined_when_the_judge_predicts_one_score():
    rows = alignment.coarse_alignment(_finals([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], [3.0] * 10))
    (row,) = rows
    assert row["jaccard"] is None and row["top50_overlap"] is None
    assert row["n_undefined"] == 1 and row["n_reviewers"] == 0
    assert "the judge's predictions are 3 for every item" in row["undefined_reason"]


def test_it_reports_undefined_when_predictions_are_nearly_constant():
    pred = [2.0] * 9 + [4.0]
    (row,) = alignment.coarse_alignment(_finals([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], pred))
    assert row["jaccard"] is None and row["top50_overlap"] is None
    assert "90%" in row["undefined_reason"]


def test_it_reports_undefined_when_the_reviewer_scores_do_not_vary():
    (row,) = alignment.coarse_alignment(_finals([3] * 10, [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]))
    assert row["jaccard"] is None
    assert "the reviewer's scores are 3 for every item" in row["undefined_reason"]


def test_it_computes_coarse_metrics_for_a_varied_judge_and_counts_only_defined_reviewers():
    varied = _finals([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 1, 2, 3, 4, 5])
    flat = _finals([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], [2.0] * 10, reviewer=2)
    (row,) = alignment.coarse_alignment(pd.concat([varied, flat], ignore_index=True))
    assert row["jaccard"] == 1.0 and row["top50_overlap"] == 1.0
    assert row["n_reviewers"] == 1 and row["n_undefined"] == 1
    assert row["undefined_reason"].startswith("Undefined for 1 of 2 reviewers")


def test_a_constant_judge_never_shows_a_perfect_top50_next_to_a_zero_alpha():
    finals = _finals([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], [3.0] * 10)
    (curve,) = alignment.alignment_curve(finals, scales={"innovativeness": (1, 5)})
    (coarse,) = alignment.coarse_alignment(finals)
    assert curve["alpha"] is None or curve["alpha"] < 0.1
    assert coarse["top50_overlap"] is None


def test_the_curve_reports_coverage_next_to_alpha():
    finals = _finals([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, np.nan, np.nan, 3, 4, 5])
    (row,) = alignment.alignment_curve(finals, scales={"innovativeness": (1, 5)})
    assert row["n"] == 8 and row["n_targets"] == 10 and row["coverage"] == 0.8


def test_the_verdict_is_well_only_with_a_high_alpha_a_tight_interval_and_coverage():
    well = alignment.verdict(alpha_value=0.8, low=0.6, high=0.9, n=20, coverage=0.95)
    assert well["level"] == "well" and well["label"] == "reproduces well"
    wide = alignment.verdict(alpha_value=0.8, low=0.2, high=0.95, n=20, coverage=0.95)
    assert wide["level"] == "partly" and "interval" in wide["reason"]
    sparse = alignment.verdict(alpha_value=0.8, low=0.6, high=0.9, n=20, coverage=0.5)
    assert sparse["level"] == "partly" and "only 50%" in sparse["reason"]


def test_the_verdict_thresholds_sit_where_the_docs_say():
    assert alignment.verdict(alpha_value=0.667, low=0.4, high=0.9, n=8, coverage=0.8)["level"] == (
        "well"
    )
    assert alignment.verdict(alpha_value=0.4, low=0.1, high=0.6, n=8, coverage=1)["level"] == (
        "partly"
    )
    assert alignment.verdict(alpha_value=0.39, low=0.1, high=0.6, n=8, coverage=1)["level"] == (
        "not_yet"
    )
    few = alignment.verdict(alpha_value=0.9, low=0.8, high=1.0, n=7, coverage=1)
    assert few["level"] == "not_yet" and "only 7 kept predictions" in few["reason"]


def test_reviewer_verdicts_give_n_and_a_bootstrap_interval_around_alpha():
    truth = [1, 2, 3, 4, 5] * 4
    pred = [1, 2, 3, 4, 5] * 3 + [2, 2, 3, 4, 4]
    (v,) = alignment.reviewer_verdicts(_finals(truth, pred), scales={"innovativeness": (1, 5)})
    assert v["n"] == 20 and v["coverage"] == 1.0
    assert v["low"] <= v["alpha"] <= v["high"]
    assert v["level"] == "well"


def test_the_coverage_accuracy_curve_moves_with_the_threshold():
    preds = pd.DataFrame(
        {"confidence": [90, 90, 60, 30, np.nan], "correct": [True, True, False, False, False]}
    )
    points = {p["threshold"]: p for p in alignment.coverage_accuracy(preds, thresholds=[0, 50, 80])}
    assert points[0]["coverage"] == 0.8 and points[0]["accuracy"] == 0.5
    assert points[50]["coverage"] == 0.6 and points[50]["accuracy"] == 2 / 3
    assert points[80]["coverage"] == 0.4 and points[80]["accuracy"] == 1.0
    none = alignment.coverage_accuracy(preds, thresholds=[95])[0]
    assert none["coverage"] == 0.0 and none["accuracy"] is None


def test_a_sample_of_the_reasoning_scatter_spans_the_whole_agreement_range():
    points = [
        {"agreement": i / 100, "similarity": 0.5, "reviewer_a": f"a{i}", "reviewer_b": "b"}
        for i in range(100)
    ]
    sample = alignment.sample_points(points, limit=10)
    assert len(sample) == 10
    assert sample[0]["agreement"] == 0.0 and sample[-1]["agreement"] == 0.99
    assert alignment.sample_points(points[:5], limit=10) == points[:5]
