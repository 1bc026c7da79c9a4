"""The findings computation's output, pinned on a fixed frame: a speed-up must not move a figure.

`data/compute_pinned.json` was written by the computation as it stood before the issue 28
speed-ups (per-idea plain lists instead of pandas groups, the discovery curve's running
products, each distinct rationale split once, the sweep reusing the page threshold's
clustering). The frame repeats rationales, shares points across ideas and domains, and gives
ideas one to eight reviewers, so every branch of the estimators is crossed. No database.

To re-pin after a change that is meant to move the figures:
    .venv/bin/python tests/findings/test_compute_pinned.py --write
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from apps.findings.analysis import compute_findings
from apps.findings.analysis.compute import COLUMNS
from apps.judges.engine.embeddings import embed_texts_local

PINNED = Path(__file__).parent / "data" / "compute_pinned.json"
POINTS = [
    "the buyer is clear",
    "no buyer is named",
    "the claims cover the core of the product",
    "a competitor ships this already",
    "the market is small and shrinking",
    "procurement cycles in hospitals are long",
    "the prototype looks feasible with current sensors",
    "the patent does not fit this use",
    "the text stays vague about the customer",
    "regulation helps the incumbent vendors",
    "integration cost with legacy systems is high",
    "it saves a measurable amount of operator time",
    "battery life limits field use",
    "privacy rules block cloud storage of the data",
]
JOINS = ["; ", ". ", ", but ", " however "]


def pinned_frame(seed: int = 28) -> pd.DataFrame:
    """About 400 rationales over 3 domains, 36 ideas and 12 reviewers."""
    rng = np.random.default_rng(seed)
    dims = ["specificity", "technical_validity", "market_size"]
    rows = []
    rating_id = 0
    for d in range(3):
        for idea in range(12):
            idea_id = d * 100 + idea + 1
            n_reviewers = int(rng.integers(1, 9))
            for reviewer in rng.choice(12, n_reviewers, replace=False):
                for dim in rng.choice(dims, int(rng.integers(1, 4)), replace=False):
                    first, second = rng.choice(len(POINTS), 2, replace=False)
                    text = POINTS[first]
                    if rng.random() < 0.7:
                        text += JOINS[int(rng.integers(0, len(JOINS)))] + POINTS[second]
                    if rng.random() < 0.1:
                        text = "Good."
                    rating_id += 1
                    rows.append(
                        (
                            rating_id,
                            idea_id,
                            f"unit-{d}",
                            str(dim),
                            str(reviewer),
                            text[:1].upper() + text[1:],
                        )
                    )
    return pd.DataFrame(rows, columns=COLUMNS)


def _computed(embed=embed_texts_local) -> dict:
    # Through JSON, as the snapshot stores it.
    return json.loads(json.dumps(compute_findings(pinned_frame(), embed)))


def test_the_findings_figures_are_those_pinned_before_the_speed_ups():
    expected = json.loads(PINNED.read_text())
    assert _computed() == expected


def test_the_figures_do_not_depend_on_columns_no_unit_uses():
    """The clustering keeps only the columns some unit of the domain uses: the same vectors
    with unused columns between theirs, or with none unused, give the same figures."""

    def spread_out(texts):
        vectors = embed_texts_local(texts)
        wide = np.zeros((len(vectors), 3 * vectors.shape[1]), dtype=vectors.dtype)
        wide[:, 1::3] = vectors
        return wide

    had_unused = set()

    def without_unused(texts):
        vectors = embed_texts_local(texts)
        used = np.flatnonzero(vectors.any(axis=0))
        had_unused.add(len(used) < vectors.shape[1])
        return vectors[:, used]

    expected = json.loads(PINNED.read_text())
    assert _computed(spread_out) == expected
    assert _computed(without_unused) == expected
    assert had_unused == {True}  # the local vectors leave most of their buckets empty


if __name__ == "__main__" and "--write" in sys.argv:
    PINNED.write_text(json.dumps(_computed(), sort_keys=True))
