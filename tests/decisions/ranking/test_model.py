"""The decision model on small frames whose answers are known (no database)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from apps.decisions.ranking.board import build_board
from apps.decisions.ranking.domain import fit_domain
from apps.decisions.ranking.model import ALL, Scale, fit_all
from apps.decisions.ranking.top import top_probability

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


def _two_dimension_domain(n_ideas: int = 24, seed: int = 0):
    """Ideas whose quality shows on both dimensions, read by three reviewers each."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n_ideas)
    rows = []
    for i, q in enumerate(quality):
        for r in (1, 2, 3):
            for dim in ("spec", "later"):
                score = int(np.clip(np.rint(3 + 1.2 * q + 0.4 * rng.normal()), 1, 5))
                rows.append((r, i, dim, score, "scored"))
    return quality, rows


def test_a_gate_pulls_the_later_dimension_down_through_the_readers_earlier_scores():
    # A gate is decided by the reviewer's own earlier scores: two of three readers scored idea
    # X's first dimension 1 and so never scored the later one; the third loved it (4 and 5).
    # The later dimension is missing for the two (not a made-up floor), but their low first
    # scores reach it through the dimensions' correlation: X sits below where its one
    # enthusiast alone puts it, on the later dimension and overall.
    quality, rows = _two_dimension_domain()
    x = len(quality)
    fan = [(1, x, "spec", 4, "scored"), (1, x, "later", 5, "scored")]
    gates = [(r, x, "spec", 1, "scored") for r in (2, 3)]
    gates += [(r, x, "later", None, "gated") for r in (2, 3)]
    scales = {"spec": Scale(1, 5), "later": Scale(1, 5)}
    ideas = np.arange(x + 1)
    gated = fit_domain(frame(rows + fan + gates), scales=scales, ideas=ideas)
    alone = fit_domain(frame(rows + fan), scales=scales, ideas=ideas)
    assert gated.correlation is not None and gated.correlation[0, 1] > 0.5
    for dim in ("later", ALL):
        assert gated.rankings[dim].estimate[x] < alone.rankings[dim].estimate[x] - 0.1
    rank = lambda est: int((est > est[x]).sum())  # noqa: E731  ideas above X
    assert rank(gated.rankings[ALL].estimate) > rank(alone.rankings[ALL].estimate)


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
    # Every read idea's interval also holds the origin's uncertainty (six ideas tell little
    # about where the average idea lies: ranking/uncertainty.py), the same for all of them;
    # the single read adds its own on top (1.5 times the width with the origin known).
    assert width[6] > 1.15 * width[:6].max()
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


def _panel_case():
    """Ten reviewers; ideas 0-11 read by all ten, idea 12 read by three (reviewers 1-3)."""
    rng = np.random.default_rng(1)
    rows = []
    for i in range(12):
        q = i % 4
        rows += [
            (r, i, "d", int(np.clip(1 + q + rng.integers(0, 2), 1, 5)), "scored")
            for r in range(1, 11)
        ]
    rows += [(r, 12, "d", 4, "scored") for r in (1, 2, 3)]
    obs = frame(rows).assign(reviewer=lambda f: "r" + f["reviewer_id"].astype(str))
    catalog = pd.DataFrame(
        {"idea_id": range(13), "idea": [f"I{i}" for i in range(13)], "title": "t", "domain": "x"}
    )
    return obs, catalog


def _predictions(idea: int, reviewers, score: float, **extra) -> pd.DataFrame:
    rs = list(reviewers)
    return pd.DataFrame(
        {
            "reviewer_id": rs,
            "reviewer": [f"r{r}" for r in rs],
            "idea_id": idea,
            "dimension": "d",
            "score": score,
            "confidence": 95,
            **extra,
        }
    )


def _row(rows, idea, dim="d"):
    return next(r for r in rows if r["idea_id"] == idea and r["dimension"] == dim)


def test_an_idea_read_by_three_gains_no_precision_from_seven_panel_predictions_of_those_reads():
    obs, catalog = _panel_case()
    empty = _predictions(12, [], 4.0, signal="panel", panel_size=3)
    panel = _predictions(12, range(4, 11), 4.0, signal="panel", panel_size=3)
    plain, _ = build_board(obs, predictions=empty, catalog=catalog, scales=SCALE)
    echoed, _ = build_board(obs, predictions=panel, catalog=catalog, scales=SCALE)
    for dim in ("d", ALL):
        before, after = _row(plain, 12, dim), _row(echoed, 12, dim)
        assert (after["low"], after["estimate"], after["high"]) == (
            before["low"],
            before["estimate"],
            before["high"],
        )
        assert after["judge_share"] == 0 and "mostly_judges" not in after["flags"]
        assert after["n_predicted"] == 7 and after["n_reviewers"] == 3
    # Listed, and labelled by what they add: the unread reviewer's scale, nothing new.
    assert {p[3] for p in _row(echoed, 12)["preds"]} == {"scale"}
    # An LLM that was shown the panel is the same echo; so are level-only and text-rule ones.
    for extra in ({"signal": "", "panel_size": 3}, {"signal": "level"}, {"signal": "text"}):
        rows, _ = build_board(
            obs,
            predictions=_predictions(12, range(4, 11), 1.0, **extra),
            catalog=catalog,
            scales=SCALE,
        )
        assert _row(rows, 12)["estimate"] == _row(plain, 12)["estimate"]
        assert _row(rows, 12)["judge_share"] == 0


def test_a_judge_that_read_the_ideas_counts_by_its_measured_accuracy():
    # Twenty ideas read by two reviewers, twenty nobody read. A judge shown none of the reads
    # predicts reviewers 3-5 on every idea. When it tracks the ideas (checked on the read ones)
    # it narrows the unread ideas' intervals and moves them its way; a judge that predicts at
    # random fails its check and changes nothing.
    rng = np.random.default_rng(3)
    quality = np.tile([0, 1, 2, 3], 10)
    rows = [
        (r, i, "d", int(np.clip(1 + q + (rng.random() < 0.3), 1, 5)), "scored")
        for i, q in enumerate(quality[:20])
        for r in (1, 2)
    ]
    rows += [(r, 40 + j, "d", 1 + j % 5, "scored") for j in range(10) for r in (3, 4, 5)]
    obs = frame(rows).assign(reviewer=lambda f: "r" + f["reviewer_id"].astype(str))
    ids = np.arange(50)
    catalog = pd.DataFrame(
        {"idea_id": ids, "idea": [f"I{i}" for i in ids], "title": "t", "domain": "x"}
    )
    good = pd.concat(
        [_predictions(i, (3, 4, 5), float(1 + quality[i]), signal="") for i in range(40)]
    )
    noise = good.assign(score=rng.integers(1, 6, len(good)).astype(float))
    none = good.iloc[:0]
    base, _ = build_board(obs, predictions=none, catalog=catalog, scales=SCALE)
    with_good, summary = build_board(obs, predictions=good, catalog=catalog, scales=SCALE)
    with_noise, noise_summary = build_board(obs, predictions=noise, catalog=catalog, scales=SCALE)
    assert summary["domains"]["x"]["judges"]["d"]["used"] is True
    assert noise_summary["domains"]["x"]["judges"]["d"]["used"] is False
    top, bottom = 23, 20  # unread, quality 3 and 0
    assert _row(with_good, top)["estimate"] > _row(with_good, bottom)["estimate"]
    width = lambda r: r["high"] - r["low"]  # noqa: E731
    assert width(_row(with_good, top)) < width(_row(base, top))
    assert (
        _row(with_good, top)["judge_share"] == 1.0
        and "mostly_judges" in _row(with_good, top)["flags"]
    )
    assert {p[3] for p in _row(with_good, top)["preds"]} == {"new"}
    for i in (top, bottom):
        assert _row(with_noise, i)["estimate"] == _row(base, i)["estimate"]


def test_the_probability_of_the_top_places_follows_the_estimates_and_their_spread():
    est = np.array([3.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    sd = np.full(10, 0.1)
    p = top_probability(est, sd, share=0.2)
    assert p[0] == 1.0 and p[1] == 1.0 and p[2:].max() == 0.0
    # Ten ideas, one place: the probabilities sum to one.
    assert abs(top_probability(np.zeros(10), np.ones(10), share=0.1).sum() - 1) < 1e-9


def _text_domain(informative: bool, seed: int = 5):
    """Sixty ideas; forty read by three reviewers. Each idea's text names one of four words; when
    ``informative`` the word is the idea's quality, otherwise it is drawn at random."""
    from apps.judges.engine.item_text import fit_item_vectors

    rng = np.random.default_rng(seed)
    words = ["copper", "silver", "gold", "platinum"]
    quality = rng.integers(0, 4, 60)
    said = quality if informative else rng.integers(0, 4, 60)
    texts = [("", f"A {words[q]} idea number {i}.") for i, q in enumerate(said)]
    rows = [
        (r, i, "d", int(np.clip(1 + quality[i] + (rng.random() < 0.3), 1, 5)), "scored")
        for i in range(40)
        for r in (1, 2, 3)
    ]
    ids = np.arange(60)
    return quality, frame(rows), (ids, fit_item_vectors(texts, "idea"))


def test_unread_ideas_get_a_text_estimate_only_where_the_domains_check_passes():
    quality, obs, vectors = _text_domain(informative=True)
    ids = np.arange(60)
    fitted = fit_domain(obs, scales=SCALE, ideas=ids, vectors=vectors)
    check = fitted.text["d"]
    assert check.used and check.gain_low > 0 and "beats the domain mean" in check.reason
    d = fitted.rankings["d"]
    unread = np.arange(40, 60)
    best, worst = unread[quality[unread] == 3], unread[quality[unread] == 0]
    assert d.estimate[best].min() > d.estimate[worst].max()
    prior = fit_domain(obs, scales=SCALE, ideas=ids).rankings["d"]
    assert (d.sd[unread] < prior.sd[unread]).all()  # the text narrows their intervals
    assert (d.judge_share[unread] == 1).all()
    # Read ideas rest on their reads alone: the text neither moves nor narrows them.
    np.testing.assert_allclose(d.estimate[:40], prior.estimate[:40])
    np.testing.assert_allclose(d.sd[:40], prior.sd[:40])
    assert (d.judge_share[:40] == 0).all()

    # Text that says nothing about quality fails the check, says so, and stays out.
    _, obs2, noise = _text_domain(informative=False)
    silent = fit_domain(obs2, scales=SCALE, ideas=ids, vectors=noise)
    assert not silent.text["d"].used and "does not beat" in silent.text["d"].reason
    plain = fit_domain(obs2, scales=SCALE, ideas=ids)
    np.testing.assert_allclose(silent.rankings[ALL].estimate, plain.rankings[ALL].estimate)
    assert (silent.rankings["d"].judge_share == 0).all()


def test_the_text_informs_an_idea_only_until_someone_reads_it():
    # The text model learns what these reviewers perceive, so on a read idea it restates the
    # readers' view: a read idea's standing is that of the board without the text, on every
    # ranking, and the moment one reviewer reads an unread idea its text estimate leaves it
    # (docs/decide.md: on the demo's truth the text on read ideas made their top 10 % worse).
    quality, obs, vectors = _text_domain(informative=True)
    ids = np.arange(60)
    with_text = fit_domain(obs, scales=SCALE, ideas=ids, vectors=vectors)
    without = fit_domain(obs, scales=SCALE, ideas=ids)
    assert with_text.text["d"].used
    for key in ("d", ALL):
        np.testing.assert_allclose(
            with_text.rankings[key].estimate[:40], without.rankings[key].estimate[:40]
        )
    # Idea 59 (text estimate in hand) gets one read: the board moves to what the read says.
    before = with_text.rankings["d"].estimate[59]
    read = pd.concat([obs, frame([(9, 59, "d", int(1 + quality[59]), "scored")])])
    after_text = fit_domain(read, scales=SCALE, ideas=ids, vectors=vectors).rankings["d"]
    after_plain = fit_domain(read, scales=SCALE, ideas=ids).rankings["d"]
    assert after_text.estimate[59] == pytest.approx(after_plain.estimate[59])
    assert after_text.judge_share[59] == 0
    assert before != pytest.approx(after_plain.estimate[59])
