"""Strictness and within-reviewer standardised scores, hand-worked."""

import math

import numpy as np
import pandas as pd
import pytest

from apps.disagreement.analysis import compute_metrics, standardise_within

from .helpers import frame_from, metrics_of


def test_strictness_gives_each_reviewers_mean_std_count_and_score_counts():
    frame = frame_from(
        [
            ("ann", 1, "d", 1),
            ("ann", 2, "d", 2),
            ("ann", 3, "d", 3),
            ("ann", 4, "d", None),
            ("bob", 1, "d", 5),
            ("bob", 2, "d", 5),
        ]
    )
    metrics = compute_metrics(frame, scales={"d": (1, 5)}, n_boot=0)
    rows = {r["reviewer"]: r for r in metrics["strictness"] if r["domain"] == "__all__"}
    assert rows["ann"]["mean"] == 2.0 and rows["ann"]["std"] == 1.0 and rows["ann"]["n"] == 3
    assert rows["ann"]["counts"] == {"1": 1, "2": 1, "3": 1, "4": 0, "5": 0}
    assert rows["bob"]["mean"] == 5.0 and rows["bob"]["std"] == 0.0
    assert rows["ann"]["background"] == "technical" and rows["bob"]["reviewer_id"] == 2
    (spread,) = [s for s in metrics["strictness_spread"] if s["domain"] == "__all__"]
    assert spread["sd_of_means"] == pytest.approx(math.sqrt(4.5))
    assert (spread["min_mean"], spread["max_mean"], spread["n_reviewers"]) == (2.0, 5.0, 2)


def test_a_reviewer_with_one_score_has_no_std_and_a_lone_reviewer_has_no_spread():
    metrics = metrics_of([("ann", 1, "d", 4)])
    (row,) = [r for r in metrics["strictness"] if r["domain"] == "__all__"]
    assert row["std"] is None and row["mean"] == 4.0
    (spread,) = [s for s in metrics["strictness_spread"] if s["domain"] == "__all__"]
    assert spread["sd_of_means"] is None and spread["n_reviewers"] == 1


def test_z_scores_are_standardised_within_reviewer_and_dimension():
    frame = frame_from(
        [
            ("ann", 1, "d", 1),
            ("ann", 2, "d", 2),
            ("ann", 3, "d", 3),
            ("ann", 1, "e", 4),
            ("ann", 2, "e", 4),  # std 0 -> z 0
            ("bob", 1, "d", 5),  # one score -> z 0
            ("bob", 2, "d", None),  # gated stays missing
        ]
    )
    z = standardise_within(frame)
    assert z.tolist()[:6] == [-1.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    assert np.isnan(z.iloc[6])


def test_standardising_removes_a_reviewers_strictness():
    frame = pd.DataFrame(
        {
            "reviewer": ["a"] * 3 + ["b"] * 3,
            "dimension": "d",
            "score": [1.0, 2.0, 3.0, 3.0, 4.0, 5.0],
        }
    )
    z = standardise_within(frame)
    assert z[:3].tolist() == z[3:].tolist()


def test_contested_ideas_rank_by_z_spread_and_report_raw_spread():
    # ann and bob use the same order on items 1-3 but opposite on item 4.
    frame = frame_from(
        [
            ("ann", 1, "d", 1),
            ("ann", 2, "d", 2),
            ("ann", 3, "d", 3),
            ("ann", 4, "d", 5),
            ("bob", 1, "d", 2),
            ("bob", 2, "d", 3),
            ("bob", 3, "d", 4),
            ("bob", 4, "d", 1),
            ("cat", 5, "d", 3),  # one score: not contested
        ]
    )
    metrics = compute_metrics(frame, n_boot=0)
    contested = metrics["contested"]
    assert [c["idea_id"] for c in contested][0] == 4
    assert 5 not in [c["idea_id"] for c in contested]
    top = contested[0]
    assert top["raw_spread"] == 4.0 and top["n_scores"] == 2
    assert top["raw_sd"] == pytest.approx(math.sqrt(8))
    z = standardise_within(frame)
    z4 = z[(frame["idea_id"] == 4)].to_numpy()
    assert top["z_spread"] == pytest.approx(z4.max() - z4.min())
    assert [c["z_spread"] for c in contested] == sorted(
        [c["z_spread"] for c in contested], reverse=True
    )
