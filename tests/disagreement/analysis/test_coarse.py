"""Coarse agreement: above-median sets and Jaccard, hand-worked."""

import numpy as np
import pytest

from apps.disagreement.analysis import (
    above_median_sets,
    coarse_agreement,
    compute_metrics,
    jaccard,
)
from apps.disagreement.analysis.synthetic import synthetic_frame

from .helpers import cell, frame_from, metrics_of


def test_items_at_the_median_are_not_above_it():
    # ann: 1 2 3 3 3 4 5 -> median 3 -> above = {6, 7}; bob: 1 1 2 2 -> median 1.5 -> {3, 4}
    frame = frame_from(
        [("ann", i, "d", s) for i, s in zip(range(1, 8), [1, 2, 3, 3, 3, 4, 5], strict=True)]
        + [("bob", i, "d", s) for i, s in zip(range(1, 5), [1, 1, 2, 2], strict=True)]
    )
    sets = above_median_sets(frame)
    assert sets[("ann", "d")] == {6, 7}
    assert sets[("bob", "d")] == {3, 4}


def test_a_reviewer_who_gives_one_value_everywhere_has_an_empty_set():
    frame = frame_from([("ann", i, "d", 3) for i in range(1, 6)])
    assert above_median_sets(frame)[("ann", "d")] == set()


def test_jaccard_is_undefined_for_an_empty_union():
    assert jaccard(set(), set()) is None
    assert jaccard({1, 2}, {2, 3}) == pytest.approx(1 / 3)


def _pair(a_scores, b_scores, start=1):
    items = range(start, start + len(a_scores))
    return [("ann", i, "d", s) for i, s in zip(items, a_scores, strict=True)] + [
        ("bob", i, "d", s) for i, s in zip(items, b_scores, strict=True)
    ]


def test_a_pair_with_ten_co_rated_items_gets_a_hand_worked_jaccard():
    # ann median 3 (values 1..5 twice): above = items with 4, 5 -> {4, 5, 9, 10}
    # bob median 2.5: above = items scored 3 -> {3, 4, 5, 8}
    ann = [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]
    bob = [2, 2, 3, 3, 3, 1, 2, 3, 2, 2]
    result = coarse_agreement(frame_from(_pair(ann, bob)))
    assert result["pairs"][("ann", "bob")] == pytest.approx(2 / 6)
    assert result["n_pairs"] == 1
    metrics = metrics_of(_pair(ann, bob), scales={"d": (1, 5)})
    assert cell(metrics)["coarse"] == {
        "jaccard": pytest.approx(2 / 6),
        "n_pairs": 1,
        "n_pairs_empty_union": 0,
    }
    (pair,) = [p for p in metrics["pairwise"] if p["domain"] == "__all__"]
    assert pair["jaccard"] == pytest.approx(2 / 6) and pair["n_items"] == 10


def test_pairs_with_fewer_than_ten_co_rated_items_are_left_out():
    ann = [1, 2, 3, 4, 5, 1, 2, 3, 4]
    bob = [1, 2, 3, 4, 5, 1, 2, 3, 4]
    metrics = metrics_of(_pair(ann, bob))
    assert cell(metrics)["coarse"] == {"jaccard": None, "n_pairs": 0, "n_pairs_empty_union": 0}
    (pair,) = [p for p in metrics["pairwise"] if p["domain"] == "__all__"]
    assert pair["n_items"] == 9 and pair["jaccard"] is None and pair["alpha"] == 1.0


def test_pairs_whose_union_is_empty_are_excluded_and_counted():
    flat = _pair([3] * 10, [2] * 10)  # nobody has anything above their own median
    ann = [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]
    good = [("cat", i, "d", s) for i, s in zip(range(1, 11), ann, strict=True)]
    metrics = metrics_of(flat + good)
    coarse = cell(metrics)["coarse"]
    # ann-bob: empty union; ann-cat and bob-cat: cat's set {4,5,9,10} vs empty -> 0.0
    assert coarse == {"jaccard": 0.0, "n_pairs": 2, "n_pairs_empty_union": 1}


def test_the_median_is_over_all_the_reviewers_items_in_the_scope_not_only_shared_ones():
    # ann rated 20 items: 10 shared with bob (all 3s) and 10 alone (all 1s) -> median 2,
    # so her shared items are all above it. Over shared items only they would not be.
    shared = _pair([3] * 10, [1, 1, 1, 1, 1, 5, 5, 5, 5, 5])
    alone = [("ann", i, "d", 1) for i in range(100, 110)]
    metrics = metrics_of(shared + alone)
    assert cell(metrics)["coarse"]["jaccard"] == pytest.approx(5 / 10)


def test_the_array_engine_agrees_with_the_set_based_reference():
    frame = synthetic_frame(
        n_ratings=6000, n_ideas=300, n_reviewers=12, n_dimensions=2, n_domains=1, seed=4
    )
    metrics = compute_metrics(frame, n_boot=0)
    for dim in ["d0", "d1"]:
        ref = coarse_agreement(frame[frame["dimension"] == dim])
        got = cell(metrics, dimension=dim)["coarse"]
        assert got["n_pairs"] == ref["n_pairs"] > 0
        assert got["n_pairs_empty_union"] == ref["n_pairs_empty_union"]
        assert got["jaccard"] == pytest.approx(ref["jaccard"], abs=1e-12)
        for p in metrics["pairwise"]:
            if p["dimension"] == dim and p["domain"] == "__all__" and p["jaccard"] is not None:
                key = (p["reviewer_a"], p["reviewer_b"])
                assert p["jaccard"] == pytest.approx(ref["pairs"][key], abs=1e-12)


def test_domain_scopes_use_the_median_within_the_domain():
    # ann: domain a items all 1-2, domain b items all 4-5. In scope "a" her median is 1.5.
    def domain_of(i):
        return "a" if i <= 10 else "b"

    rows = []
    for i in range(1, 21):
        base = 1 if i <= 10 else 4
        rows.append(("ann", i, "d", base + (i % 2)))
        rows.append(("bob", i, "d", base + (i % 2)))
    metrics = metrics_of(rows, domain_of)
    assert cell(metrics, domain="a")["coarse"]["jaccard"] == 1.0
    assert cell(metrics, domain="b")["coarse"]["jaccard"] == 1.0
    assert np.isclose(cell(metrics)["coarse"]["jaccard"], 1.0)
