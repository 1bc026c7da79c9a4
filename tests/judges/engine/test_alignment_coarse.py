"""Coarse alignment computed as arrays gives what it gives computed frame by frame (pure
functions on small frames, no database)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from apps.judges.engine import alignment


def finals(seed: int) -> pd.DataFrame:
    """Several reviewers, dimensions, kinds and k; missing predictions and truths; one
    reviewer whose judge says the same thing every time."""
    rng = np.random.default_rng(seed)
    n = 900
    frame = pd.DataFrame(
        {
            "reviewer_id": rng.integers(1, 7, n),
            "idea_id": rng.integers(10, 60, n),
            "dimension": rng.choice(["need", "impact"], n),
            "kind": rng.choice(["personalized", "aggregate", "zero_shot"], n),
            "k": rng.choice([2, 9], n),
            "truth": rng.choice([0.0, 1.0, 2.0, 3.0, np.nan], n),
            "pred": rng.choice([0.0, 1.0, 2.0, 3.0, np.nan], n),
        }
    )
    frame.loc[frame["reviewer_id"] == 6, "pred"] = 2.0
    return frame


def frame_by_frame(frame: pd.DataFrame, k: int | None, by_reviewer: bool) -> list[tuple]:
    keys = ["dimension", "kind"] + (["reviewer_id"] if by_reviewer else [])
    out = []
    for key, group in frame.groupby(keys, sort=True):
        use_k = int(group["k"].max()) if k is None else k
        kept = group[group["k"] == use_k].dropna(subset=["pred", "truth"])
        figures = [
            alignment.coarse_pair(g["truth"], g["pred"], g["idea_id"])
            for _, g in kept.groupby("reviewer_id")
        ]
        jaccards = [j for j, _, why in figures if not why and j is not None]
        overlaps = [o for _, o, why in figures if not why and o is not None]
        out.append(
            (
                *key,
                use_k,
                float(np.mean(jaccards)) if jaccards else None,
                float(np.mean(overlaps)) if overlaps else None,
                len(overlaps),
                sum(1 for *_, why in figures if why),
            )
        )
    return out


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [None, 2, 9])
@pytest.mark.parametrize("by_reviewer", [False, True])
def test_coarse_alignment_is_the_frame_by_frame_figure(seed, k, by_reviewer):
    frame = finals(seed)
    got = alignment.coarse_alignment(frame, k=k, by_reviewer=by_reviewer)
    want = frame_by_frame(frame, k, by_reviewer)
    assert [
        (
            r["dimension"],
            r["kind"],
            *([r["reviewer_id"]] if by_reviewer else []),
            r["k"],
            r["jaccard"],
            r["top50_overlap"],
            r["n_reviewers"],
            r["n_undefined"],
        )
        for r in got
    ] == sorted(want, key=lambda w: (w[0], alignment.KIND_ORDER.index(w[1])))
    assert any(r["n_undefined"] for r in got)  # the constant judge is said to be undefined
