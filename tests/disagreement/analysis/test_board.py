"""The decision board on a small frame with known calibrated scores and predictions."""

import numpy as np
import pandas as pd
import pytest

from apps.disagreement.analysis.board import idea_board
from apps.disagreement.analysis.categories import analysis_scores

from .helpers import frame_from

# ann: 1 1 3 on d (z -0.577 -0.577 1.155); bob: 1 3 2 (z -1 1 0);
# cat: 2 4 on I4, I5 (z -0.707 0.707).
ROWS = [
    ("ann", 1, "d", 1),
    ("bob", 1, "d", 1),
    ("ann", 2, "d", 1),
    ("bob", 2, "d", 3),
    ("ann", 3, "d", 3),
    ("bob", 3, "d", 2),
    ("cat", 4, "d", 2),
    ("cat", 5, "d", 4),
]


def board(predictions=(), categories=None, rows=ROWS):
    frame = frame_from(rows)
    given, score = analysis_scores(frame, categories=categories)
    ids = {"ann": 1, "bob": 2, "cat": 3}
    preds = pd.DataFrame(
        [
            {
                "reviewer_id": ids[r],
                "reviewer": r,
                "idea_id": i,
                "dimension": "d",
                "score": s,
                "confidence": c,
            }
            for r, i, s, c in predictions
        ],
        columns=["reviewer_id", "reviewer", "idea_id", "dimension", "score", "confidence"],
    )
    catalog = pd.DataFrame(
        [
            {"idea_id": i, "idea": f"I{i}", "title": f"Idea {i}", "domain": "nlp"}
            for i in range(1, 7)
        ]
    )
    out = idea_board(
        frame,
        given=given,
        score=score,
        predictions=preds,
        catalog=catalog,
        dims=["d"],
        categories=categories,
    )
    return {(r["idea_id"], r["dimension"]): r for r in out}


def test_every_catalogue_idea_gets_a_row_per_dimension_and_overall():
    rows = board()
    assert set(rows) == {(i, d) for i in range(1, 7) for d in ("d", "__all__")}
    assert rows[(6, "d")]["n_scores"] == 0 and rows[(6, "d")]["z_mean"] is None


def test_it_gives_raw_and_calibrated_scores_per_reviewer():
    row = board()[(2, "d")]
    assert row["scores"] == [["ann", 1.0, -0.577], ["bob", 3.0, 1.0]]
    assert row["raw_mean"] == 2.0 and row["raw_spread"] == 2.0
    assert row["z_mean"] == pytest.approx((1 - 1 / 3**0.5) / 2)
    assert row["z_spread"] == pytest.approx(1 + 1 / 3**0.5)


def test_a_prediction_is_calibrated_on_the_target_reviewers_own_scale():
    rows = board(predictions=[("cat", 1, 4, 90), ("cat", 2, 3, 70)])
    first = rows[(1, "d")]
    assert first["preds"] == [["cat", 4.0, 90.0, 0.707]]
    assert first["pred_mean"] == 4.0 and first["pred_confidence"] == 90.0
    assert first["pred_z_mean"] == pytest.approx(1 / 2**0.5)
    assert rows[(2, "d")]["pred_z_mean"] == pytest.approx(0.0)
    assert rows[(1, "__all__")]["pred_z_mean"] == pytest.approx(1 / 2**0.5)


def test_a_prediction_for_a_reviewer_who_read_the_idea_is_dropped():
    rows = board(predictions=[("ann", 2, 4, 95)])
    assert rows[(2, "d")]["n_pred"] == 0 and rows[(2, "d")]["preds"] == []


def test_category_answers_are_named_but_not_calibrated():
    rows = [
        ("ann", 1, "d", 0),
        ("bob", 1, "d", 3),
        ("ann", 2, "d", 2),
        ("bob", 2, "d", 1),
        ("ann", 3, "d", 3),
    ]
    row = board(categories={"d": [0]}, rows=rows)[(1, "d")]
    assert row["n_scores"] == 1 and row["n_category"] == 1
    assert row["scores"][0] == ["ann", 0.0, None]
    assert row["raw_spread"] is None and np.isfinite(row["z_mean"])
