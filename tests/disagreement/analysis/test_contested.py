"""The contested ranking on a small frame whose order is worked out by hand."""

import pytest

from apps.disagreement.analysis import compute_metrics
from apps.disagreement.analysis.contested import ORDER

from .helpers import frame_from

# ann: 1 1 3 (mean 5/3, sd sqrt(4/3)); bob: 1 3 2 (mean 2, sd 1).
# z ann: -0.577 -0.577 1.155; z bob: -1 1 0.
# I1: raw 1 1 (identical), z spread 0.423. I2: raw 1 3, z spread 1.577. I3: raw 3 2, z 1.155.
ROWS = [
    ("ann", 1, "d", 1),
    ("bob", 1, "d", 1),
    ("ann", 2, "d", 1),
    ("bob", 2, "d", 3),
    ("ann", 3, "d", 3),
    ("bob", 3, "d", 2),
]


def contested(rows):
    frame = frame_from(rows)
    frame["title"] = frame["idea_id"].map(lambda i: f"Idea number {i}")
    return compute_metrics(frame, n_boot=0)["contested"]


def test_it_orders_by_calibrated_spread_then_raw_spread():
    rows = contested(ROWS)
    assert [r["idea_id"] for r in rows] == [2, 3]
    assert rows[0]["z_spread"] == pytest.approx(1 + 1 / 3**0.5)
    assert rows[1]["z_spread"] == pytest.approx(2 / 3**0.5)
    assert ORDER == ("z_spread", "raw_spread")


def test_it_never_lists_an_idea_whose_reviewers_gave_identical_scores():
    ids = [r["idea_id"] for r in contested(ROWS)]
    assert 1 not in ids
    same = contested(
        [("ann", 1, "d", 2), ("bob", 1, "d", 2), ("ann", 2, "d", 1), ("bob", 2, "d", 4)]
    )
    assert [r["idea_id"] for r in same] == [2]


def test_it_names_ideas_by_title():
    rows = contested(ROWS)
    assert rows[0]["title"] == "Idea number 2" and rows[0]["idea"] == "I2"


def test_equal_calibrated_spreads_are_broken_by_raw_spread():
    # Both reviewers use the same two values, so z spreads tie; I2's raw spread is larger.
    rows = [
        ("ann", 1, "d", 1),
        ("bob", 1, "d", 2),
        ("ann", 2, "d", 1),
        ("bob", 2, "d", 4),
        ("ann", 3, "d", 3),
        ("bob", 3, "d", 4),
    ]
    got = contested(rows)
    assert got[0]["raw_spread"] >= got[1]["raw_spread"]
