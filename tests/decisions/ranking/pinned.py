"""A fixed small case whose every output the decision recompute's speed work must leave alone.

The board (both boards' rows and the summary), the unrounded rankings of every domain fit (all
and people), P(top) by draws and in closed form, and a routing round, on frames built from a
fixed seed: people, judges that are new evidence and echoes of the reads, gated, declined and
category answers, a domain text model whose check passes. ``test_pinned.py`` compares them with
``pinned_board.json``, written by the code before the speed work.

Only a change of the statistics may change these numbers; then regenerate the file with
``.venv/bin/python -m tests.decisions.ranking.pinned`` and say why in the commit.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from apps.decisions.ranking.board import build_boards, scales_from, unread_predictions
from apps.decisions.ranking.domain import fit_domain
from apps.decisions.ranking.routing import IdeaState, Policy, one_read_var, pair_confidence, route
from apps.decisions.ranking.rows import slice_rows
from apps.decisions.ranking.top import top_probability

PINNED = Path(__file__).with_name("pinned_board.json")
DIMS = ["d0", "d1", "d2"]
DOMAINS = ["alpha", "beta"]


def case() -> dict[str, Any]:
    """The inputs: frame, predictions, catalogue, scales, text vectors, routing candidates."""
    rng = np.random.default_rng(7)
    n_ideas, n_reviewers = 300, 24
    ideas = np.arange(1, n_ideas + 1)
    domain_of = np.where(ideas % 2 == 0, "alpha", "beta")
    quality = rng.normal(size=(n_ideas, len(DIMS)))
    severity = rng.normal(scale=0.6, size=n_reviewers)
    spread = rng.uniform(0.6, 1.4, n_reviewers)
    rows = []
    for i in ideas:
        # 0 to 4 readers of the idea's domain: some ideas unread.
        pool = [r for r in range(1, n_reviewers + 1) if (r % 2 == 0) == (i % 2 == 0)]
        for r in rng.choice(pool, size=int(rng.integers(0, 5)), replace=False).tolist():
            declined = rng.random() < 0.05
            for j, d in enumerate(DIMS):
                latent = quality[i - 1, j] * spread[r - 1] + severity[r - 1]
                score = float(np.clip(np.rint(3 + latent + 0.5 * rng.normal()), 1, 5))
                status = "scored"
                if declined:
                    score, status = math.nan, "declined"
                elif j > 0 and rows and rows[-1][3] == 1.0 and rows[-1][1] == i:
                    score, status = math.nan, "gated"
                elif d == "d2" and rng.random() < 0.05:
                    score = 0.0  # a category answer
                rows.append((r, i, d, score, status))
    frame = pd.DataFrame(rows, columns=["reviewer_id", "idea_id", "dimension", "score", "status"])
    frame["reviewer"] = [f"r{r:02d}" for r in frame["reviewer_id"]]
    frame["domain"] = domain_of[frame["idea_id"].to_numpy() - 1]
    catalog = pd.DataFrame(
        {
            "idea_id": ideas,
            "idea": [f"I{i:03d}" for i in ideas],
            "title": [f"Idea {i}" for i in ideas],
            "domain": domain_of,
        }
    )
    # Predictions: panel echoes, level and text echoes, and new evidence (an LLM that read it).
    preds = []
    for _ in range(2000):
        i = int(rng.integers(1, n_ideas + 1))
        r = int(rng.choice([r for r in range(1, n_reviewers + 1) if (r % 2 == 0) == (i % 2 == 0)]))
        j = int(rng.integers(0, len(DIMS)))
        kind = rng.choice(["panel", "level", "text", "", ""])
        score = int(np.clip(np.rint(3 + quality[i - 1, j] + 0.3 * rng.normal()), 1, 5))
        confidence = float(rng.integers(40, 100))
        panel = 3 * (kind == "panel")
        preds.append((r, f"r{r:02d}", i, DIMS[j], score, confidence, kind, panel))
    predictions = pd.DataFrame(
        preds,
        columns=[
            "reviewer_id",
            "reviewer",
            "idea_id",
            "dimension",
            "score",
            "confidence",
            "signal",
            "panel_size",
        ],
    ).drop_duplicates(["reviewer_id", "idea_id", "dimension"])
    # Text vectors: a few columns that carry the ideas' mean quality, the rest noise.
    vectors = {}
    for dom in DOMAINS:
        ids = np.sort(ideas[domain_of == dom])
        signal = quality[ids - 1].mean(axis=1)
        dense = np.abs(rng.normal(size=(len(ids), 40))) * (rng.random((len(ids), 40)) < 0.2)
        dense[:, 0] = np.maximum(signal, 0)
        dense[:, 1] = np.maximum(-signal, 0)
        vectors[dom] = (ids, sparse.csr_matrix(dense))
    read = set(zip(frame["reviewer_id"].tolist(), frame["idea_id"].tolist(), strict=True))
    candidates = [
        (r, int(i))
        for r in range(1, n_reviewers + 1)
        for i in ideas.tolist()
        if (r % 2 == 0) == (i % 2 == 0) and (r, i) not in read
    ]
    return {
        "frame": frame,
        "predictions": predictions,
        "catalog": catalog,
        "scales": scales_from({d: (1, 5) for d in DIMS}, {"d2": [0]}),
        "vectors": vectors,
        "candidates": candidates,
    }


def _arrays(ranking) -> dict[str, list[float]]:
    return {
        "estimate": ranking.estimate.tolist(),
        "sd": ranking.sd.tolist(),
        "judge_share": ranking.judge_share.tolist(),
    }


def outputs() -> dict[str, Any]:
    """Every output of the case (JSON-ready)."""
    c = case()
    boards, summary = build_boards(
        c["frame"],
        predictions=c["predictions"],
        catalog=c["catalog"],
        scales=c["scales"],
        vectors=c["vectors"],
    )
    for info in summary["domains"].values():
        # The digest of a domain's inputs includes the code that computes the board, so it
        # changes with every change of this package, by design (ranking/digest.py).
        del info["digest"]
    fits: dict[str, Any] = {}
    for dom in DOMAINS:
        cat = c["catalog"][c["catalog"]["domain"] == dom]
        ids = np.sort(cat["idea_id"].to_numpy(np.int64))
        frame = c["frame"][c["frame"]["status"] != "declined"]
        preds = unread_predictions(c["frame"], c["predictions"])
        fitted = fit_domain(
            frame[frame["idea_id"].isin(ids)],
            scales=c["scales"],
            ideas=ids,
            predictions=preds[preds["idea_id"].isin(ids)],
            vectors=c["vectors"][dom],
        )
        fits[dom] = {
            "all": {k: _arrays(v) for k, v in fitted.rankings.items()},
            "people": {k: _arrays(v) for k, v in fitted.people_rankings.items()},
            "correlation": None if fitted.correlation is None else fitted.correlation.tolist(),
        }
    rng = np.random.default_rng(3)
    est = rng.normal(size=3000)
    sd = rng.uniform(0.05, 0.8, 3000)
    top = {
        "draws": top_probability(est[:400], sd[:400], share=0.1).tolist(),
        "closed_form": top_probability(est, sd, share=0.1).tolist(),
    }
    rows = {name: [r for s in made for r in slice_rows(s)] for name, made in boards.items()}
    overall = [r for r in rows["all"] if r["dimension"] == "__all__"]
    states = {
        r["idea_id"]: IdeaState(
            r["domain"],
            r["estimate"],
            (r["high"] - r["low"]) / 2 / 1.6448536269514722,
            r["n_reviewers"],
            r["judge_share"],
            p_top=r["p_top"],
            top_n=5,
        )
        for r in overall
    }
    suggestions = route(
        ideas=states,
        candidates=c["candidates"],
        open_load={2: 15, 3: 25},
        confidence=pair_confidence(unread_predictions(c["frame"], c["predictions"])),
        one_read_var=one_read_var(states),
        policy=Policy(),
    )
    return {
        # The slices as the rows they stand for (what the code gave before slices were columns).
        "boards": rows,
        "summary": summary,
        "fits": fits,
        "top": top,
        "suggestions": [[s.reviewer_id, s.idea_id, s.kind, s.value, s.reason] for s in suggestions],
    }


if __name__ == "__main__":
    PINNED.write_text(json.dumps(outputs(), sort_keys=True, separators=(",", ":")))
    print(f"wrote {PINNED}")
