"""A recompute keeps the earlier board of every domain whose inputs are unchanged
(ranking/digest.py), and what it does fit is what a full recompute would give."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from apps.decisions.ranking.board import build_boards, scales_from
from tests.decisions.ranking.pinned import DIMS, case


def boards(c: dict[str, Any], **kw: Any):
    return build_boards(
        c["frame"],
        predictions=c["predictions"],
        catalog=c["catalog"],
        scales=c["scales"],
        vectors=c["vectors"],
        **kw,
    )


def without_kept(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k != "kept"}


def test_unchanged_inputs_keep_every_domains_earlier_board():
    c = case()
    first, summary = boards(c)
    assert summary["kept"] == [] and first["all"]
    again, summary_again = boards(c, previous=summary)
    assert again == {"all": [], "people": []}
    assert summary_again["kept"] == ["alpha", "beta"]
    assert without_kept(summary_again) == without_kept(summary)


def test_the_same_rows_in_another_order_are_the_same_inputs():
    c = case()
    _, summary = boards(c)
    rng = np.random.default_rng(1)
    shuffled = {
        **c,
        "frame": c["frame"].iloc[rng.permutation(len(c["frame"]))],
        "predictions": c["predictions"].iloc[rng.permutation(len(c["predictions"]))],
    }
    _, summary_again = boards(shuffled, previous=summary)
    assert summary_again["kept"] == ["alpha", "beta"]


def test_a_changed_rating_refits_its_domain_only_as_a_full_recompute_would():
    c = case()
    _, summary = boards(c)
    frame = c["frame"].copy()
    at = frame.index[(frame["domain"] == "alpha") & (frame["status"] == "scored")][0]
    frame.loc[at, "score"] = 1.0 if frame.loc[at, "score"] != 1.0 else 5.0
    changed = {**c, "frame": frame}
    part, summary_part = boards(changed, previous=summary)
    full, summary_full = boards(changed)
    assert summary_part["kept"] == ["beta"]
    for name in ("all", "people"):
        assert part[name] == [r for r in full[name] if r["domain"] == "alpha"]
        assert part[name]  # alpha was fitted again
    assert without_kept(summary_part) == without_kept(summary_full)
    # ... and the refit saw the change: alpha's rows are not the first board's.
    first, _ = boards(c)
    assert part["all"] != [r for r in first["all"] if r["domain"] == "alpha"]


def test_what_a_board_shows_beyond_the_ratings_is_part_of_its_inputs():
    c = case()
    _, summary = boards(c)
    # A title is on the board's rows.
    catalog = c["catalog"].copy()
    catalog.loc[catalog["domain"] == "alpha", "title"] += " (renamed)"
    _, s = boards({**c, "catalog": catalog}, previous=summary)
    assert s["kept"] == ["beta"]
    # The text model's vectors.
    ids, matrix = c["vectors"]["beta"]
    vectors = {**c["vectors"], "beta": (ids, sparse.csr_matrix(matrix * 2.0))}
    _, s = boards({**c, "vectors": vectors}, previous=summary)
    assert s["kept"] == ["alpha"]
    # A prediction (the judges' evidence) of an alpha idea.
    preds = c["predictions"].copy()
    at = preds.index[preds["idea_id"] % 2 == 0][0]
    preds.loc[at, "confidence"] = preds.loc[at, "confidence"] - 1
    _, s = boards({**c, "predictions": preds}, previous=summary)
    assert s["kept"] == ["beta"]
    # The shortlist's share and the scales reach every domain.
    _, s = boards(c, previous=summary, top_share=0.2)
    assert s["kept"] == []
    wider = scales_from({d: (1, 6) for d in DIMS}, {"d2": [0]})
    _, s = boards({**c, "scales": wider}, previous=summary)
    assert s["kept"] == []


def test_an_earlier_summary_without_digests_keeps_nothing():
    c = case()
    _, summary = boards(c)
    old = {**summary, "domains": {d: {**v} for d, v in summary["domains"].items()}}
    for info in old["domains"].values():
        del info["digest"]
    _, s = boards(c, previous=old)
    assert s["kept"] == []
