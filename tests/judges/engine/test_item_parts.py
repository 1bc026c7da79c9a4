"""The measurement of item text parts (engine/item_parts.py) on frames whose answer is known."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy import sparse

from apps.judges.backends.local import LocalBackend
from apps.judges.engine import text_rule
from apps.judges.engine.item_parts import measure_item_parts
from apps.judges.engine.item_text import FULL, IDEA, SOURCE, fit_item_vectors, vector_model
from apps.judges.engine.judgment import Example, JudgeRequest, RubricDimension

SIGNAL_WORDS = {
    1: "ledger invoice reconciliation audit bookkeeping",
    2: "sensor telemetry vibration turbine monitoring",
    3: "genome sequencing protein assay clinical",
    4: "satellite orbit antenna uplink spectrum",
}


_VOCABULARY = [
    "".join(random.Random(n).choice("bcdfghjklmnpqrstvwxz") + "aeiou"[n % 5] for _ in range(3))
    for n in range(300)
]


def _story(rng: random.Random, words: int = 400) -> str:
    """A long text about nothing in particular: common words in a random order, so it shares
    words with every other story by chance (as long stories in one language do)."""
    return " ".join(rng.choice(_VOCABULARY) for _ in range(words))


def _frame(*, signal_in: str, n_ideas: int = 48, reviewers: int = 3, seed: int = 0):
    """Ideas in four topics; each reviewer scores an idea by its topic, on their own level.
    ``signal_in`` says which part names the topic: "idea" (the source is a unique story) or
    "source" (the idea text is a unique story)."""
    rng = random.Random(seed)
    texts, ratings = {}, []
    for i in range(n_ideas):
        topic = 1 + i % 4
        topical = f"{SIGNAL_WORDS[topic]} {SIGNAL_WORDS[topic]}"
        story = _story(rng)
        texts[i + 1] = (story, topical) if signal_in == "idea" else (topical, story)
        for r in range(reviewers):
            ratings.append((i + 1, 100 + r, "dim", min(5, topic + (r % 2))))
    return texts, ratings, {"dim": (1, 5)}


def test_a_source_document_no_example_shares_makes_the_measurement_pick_the_idea_alone():
    texts, ratings, scales = _frame(signal_in="idea")
    choice = measure_item_parts(texts, ratings, scales, k=5, seeds=(0,))
    assert choice.parts == IDEA, choice.reason
    figures = {f.parts: f for f in choice.figures}
    assert figures[IDEA].per_reviewer_alpha > 0.5
    # The unique stories drown the topic words of the full text.
    assert figures[IDEA].per_reviewer_alpha > figures[FULL].per_reviewer_alpha + 0.2
    assert choice.n_targets == 48 * 3
    assert "idea" in choice.reason and "per-reviewer alpha" in choice.reason


def test_when_the_signal_is_in_the_source_document_the_idea_alone_is_not_chosen():
    texts, ratings, scales = _frame(signal_in="source")
    choice = measure_item_parts(texts, ratings, scales, k=5, seeds=(0,))
    assert choice.parts in (SOURCE, FULL), choice.reason
    figures = {f.parts: f for f in choice.figures}
    assert figures[SOURCE].per_reviewer_alpha > figures[IDEA].per_reviewer_alpha + 0.3


def test_ties_keep_the_full_text_and_too_few_ratings_keep_the_default_with_a_reason():
    # Identical texts in every part: every candidate measures the same, the first one wins.
    texts = {i: ("same words here", "same words here") for i in range(1, 21)}
    ratings = [(i, 7, "dim", 1 + i % 3) for i in texts]
    choice = measure_item_parts(texts, ratings, {"dim": (1, 3)}, k=3, seeds=(0,))
    assert choice.parts == FULL
    lonely = measure_item_parts(texts, [(1, 7, "dim", 2)], {"dim": (1, 3)})
    assert lonely.parts == FULL and "nothing to measure" in lonely.reason
    assert lonely.figures == ()


def test_the_measurement_never_reads_the_targets_own_score_through_its_examples():
    # Two ideas per reviewer: each target's only example is the other idea. If the target's own
    # score leaked, predictions would be perfect; they must be the other idea's score.
    texts = {1: ("a", "alpha words"), 2: ("b", "alpha words")}
    ratings = [(1, 5, "dim", 1), (2, 5, "dim", 3)]
    choice = measure_item_parts(texts, ratings, {"dim": (1, 3)}, k=9, seeds=(0,))
    assert choice.n_targets == 2
    assert all(f.pooled_alpha is None or f.pooled_alpha < 0 for f in choice.figures)


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match="'summary'"):
        measure_item_parts({}, [], {}, candidates=("summary",))
    with pytest.raises(ValueError, match="k must be at least 1"):
        measure_item_parts({}, [], {}, k=0)
    assert vector_model(FULL) == "tfidf-domain-v2"
    assert vector_model(IDEA) == "tfidf-domain-v2:idea"


@pytest.mark.parametrize("scale", [(1, 5), (0, 100)])
def test_the_replayed_rule_is_the_local_judges_own(scale):
    """The measurement predicts with engine.text_rule; the local backend must give the same
    scores for the same examples and vectors, on a coarse and on a fine scale."""
    rng = np.random.default_rng(3)
    lo, hi = scale
    items = [
        (f"patent {i} words", f"idea {i} " + " ".join(rng.choice(list("abcdefgh"), 6)))
        for i in range(30)
    ]
    matrix = fit_item_vectors(items, IDEA)
    vectors = {i: matrix[i] for i in range(30)}
    dim = RubricDimension(key="d", name="D", description="", scale_min=lo, scale_max=hi)
    scores = rng.integers(lo, hi + 1, size=30)
    requests, rows = [], []
    for t in range(10):
        ex = [j for j in range(10, 30) if (j + t) % 3 == 0][:5]
        rows.append(ex)
        requests.append(
            JudgeRequest(
                dimension=dim,
                examples=tuple(Example(j, *items[j], int(scores[j]), idea_id=j) for j in ex),
                patent_text=items[t][0],
                idea_text=items[t][1],
                idea_id=t,
            )
        )
    replies = LocalBackend(vectors=vectors).judge_batch(requests)
    gram = (matrix @ matrix.T).toarray()
    ex_rows = np.array(rows)
    sims = np.clip(gram[np.arange(10)[:, None], ex_rows], 0, None)
    pred = text_rule.predict(
        sims,
        np.ones_like(ex_rows, dtype=bool),
        scores[ex_rows],
        np.full(10, lo),
        np.full(10, hi),
    )
    assert [r.score for r in replies] == pred.tolist()
    assert sparse.issparse(matrix)


def test_a_reviewer_with_many_ratings_is_sampled_to_max_targets_per_dimension():
    from apps.judges.engine.item_parts import MAX_TARGETS

    texts = {i: (f"source {i}", f"idea {i % 7}") for i in range(1, 151)}
    ratings = [(i, 3, "dim", 1 + i % 3) for i in texts]
    choice = measure_item_parts(texts, ratings, {"dim": (1, 3)}, k=3, seeds=(0, 1))
    assert choice.n_targets == 2 * MAX_TARGETS
