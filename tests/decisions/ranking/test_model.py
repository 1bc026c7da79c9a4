"""The decision model on small frames whose answers are known (no database)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from apps.decisions.ranking.board import build_board
from apps.decisions.ranking.model import ALL, Scale, fit_all, top_probability

SCALE = {"d": Scale(1, 5)}


def frame(rows: list[tuple[int, int, str, float | None, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["reviewer_id", "idea_id", "dimension", "score", "status"])


def test_a_strict_and_a_lenient_reviewer_who_order_ideas_alike_give_the_same_ranking():
    # Reviewer 1 is lenient (3..5), reviewer 2 strict (1..3), by two points; each read their
    # own half of the ideas plus three shared anchors. Raw means would put every idea of
    # reviewer 1 above every idea of reviewer 2; the model ranks by quality alone.
    quality = [0, 1, 2] * 6
    rows = []
    for i, q in enumerate(quality):
        if i < 9 or i >= 15:
            rows.append((1, i, "d", 3 + q, "scored"))
        if i >= 9:
            rows.append((2, i, "d", 1 + q, "scored"))
    fits, ranked = fit_all(frame(rows), scales=SCALE, ideas=np.arange(len(quality)))
    est = ranked["d"].estimate
    levels = np.array(quality)
    # Every idea of a higher quality ranks above every idea of a lower one, whoever read it.
    assert est[levels == 0].max() < est[levels == 1].min()
    assert est[levels == 1].max() < est[levels == 2].min()
    # Same quality, nearly the same estimate: far less than the two raw points between them.
    for q in (0, 1, 2):
        assert np.ptp(est[levels == q]) < 0.5
    severity = dict(zip(fits[0].reviewers.tolist(), fits[0].severity.tolist(), strict=True))
    assert severity[1] > severity[2]


def test_an_idea_a_majority_gated_out_ranks_low():
    # Ideas 0-3 scored 3-4 by everyone; idea 4 scored 5 by one reader but gated out (failed an
    # earlier stage) by the two others: the gate is evidence, so it ranks last, not first.
    rows = []
    for i, s in enumerate([3, 4, 3, 4]):
        rows += [(r, i, "d", s, "scored") for r in (1, 2, 3)]
    rows += [(1, 4, "d", 5, "scored"), (2, 4, "d", None, "gated"), (3, 4, "d", None, "gated")]
    _, ranked = fit_all(frame(rows), scales=SCALE, ideas=np.arange(5))
    order = ranked["d"].ideas[np.argsort(-ranked["d"].estimate)].tolist()
    assert order[-1] == 4


def test_a_single_reader_leaves_a_wide_interval_and_no_reader_the_widest():
    # Six ideas of clearly different quality, each read by four reviewers who nearly agree.
    rows = []
    for i, q in enumerate([1, 2, 3, 3, 4, 5]):
        rows += [
            (r, i, "d", min(5, max(1, q + (r == 4) * (-1) ** i)), "scored") for r in range(1, 5)
        ]
    rows.append((1, 6, "d", 4, "scored"))
    _, ranked = fit_all(frame(rows), scales=SCALE, ideas=np.arange(8))
    width = ranked["d"].high - ranked["d"].low
    assert width[6] > 1.5 * width[:6].max()
    assert width[7] > width[6]


def test_category_answers_stay_out_of_the_estimate_and_are_counted_beside_it():
    scales = {"need": Scale(0, 3, (0,))}
    base = [(r, i, "need", 1 + (i % 3), "scored") for i in range(4) for r in (1, 2)]
    catalog = pd.DataFrame(
        {"idea_id": range(4), "idea": [f"I{i}" for i in range(4)], "title": "t", "domain": "x"}
    )
    empty = pd.DataFrame(columns=["reviewer_id", "reviewer", "idea_id", "dimension", "score"])
    with_cat = frame(base + [(3, 2, "need", 0, "scored")]).assign(reviewer="r")
    without = frame(base).assign(reviewer="r")
    rows_cat, _ = build_board(with_cat, predictions=empty, catalog=catalog, scales=scales)
    rows_no, _ = build_board(without, predictions=empty, catalog=catalog, scales=scales)
    pick = lambda rows: next(r for r in rows if r["idea_id"] == 2 and r["dimension"] == "need")  # noqa: E731
    assert pick(rows_cat)["n_category"] == 1 and pick(rows_no)["n_category"] == 0
    assert pick(rows_cat)["estimate"] == pick(rows_no)["estimate"]


def test_predictions_count_with_their_confidence_and_show_as_the_judges_share():
    rows = [(r, i, "d", 2 + (i % 3), "scored") for i in range(6) for r in (1, 2)]
    rows.append((1, 6, "d", 3, "scored"))
    obs = frame(rows)
    sure = pd.DataFrame(
        {"reviewer_id": [2], "idea_id": [6], "dimension": ["d"], "score": [5.0], "confidence": [90]}
    )
    unsure = sure.assign(confidence=[0])
    _, plain = fit_all(obs, scales=SCALE, ideas=np.arange(7))
    _, with_sure = fit_all(obs, scales=SCALE, ideas=np.arange(7), predictions=sure)
    _, with_unsure = fit_all(obs, scales=SCALE, ideas=np.arange(7), predictions=unsure)
    assert with_sure["d"].estimate[6] > plain["d"].estimate[6]
    assert abs(with_unsure["d"].estimate[6] - plain["d"].estimate[6]) < 1e-9
    share = with_sure["d"].judge_share[6]
    assert 0 < share < 0.5  # half a read at most, against one human read
    assert with_sure["d"].judge_share[:6].max() == 0
    assert with_sure[ALL].judge_share[6] == share


def test_the_probability_of_the_top_places_follows_the_estimates_and_their_spread():
    est = np.array([3.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    sd = np.full(10, 0.1)
    p = top_probability(est, sd, share=0.2)
    assert p[0] == 1.0 and p[1] == 1.0 and p[2:].max() == 0.0
    # Ten ideas, one place: the probabilities sum to one.
    assert abs(top_probability(np.zeros(10), np.ones(10), share=0.1).sum() - 1) < 1e-9
