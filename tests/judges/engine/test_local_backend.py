"""The local baseline (not an LLM): similarity-weighted vote over the examples' scores,
vectorised over a batch."""

import random

import numpy as np

from apps.judges.backends import (
    LOCAL_BASELINE_LABEL,
    Example,
    JudgeRequest,
)
from apps.judges.backends.local import RECOMMENDED_THRESHOLD
from apps.judges.engine.postprocess import aggregate_seeds
from tests.judges.engine.conftest import NEED, SPECIFICITY, make_request

# Each latent quality level has its own vocabulary, so similar texts deserve similar scores.
VOCAB = {
    1: ["vague", "somehow", "unclear", "general", "maybe", "something"],
    2: ["platform", "helps", "teams", "improve", "process", "tool"],
    3: ["sensor", "dashboard", "alerts", "fleet", "batteries", "predicts"],
}
FILLER = ["the", "product", "uses", "patent", "method", "company", "users", "market"]


def synthetic_items(n: int, rng: random.Random) -> list[tuple[str, str, int]]:
    items = []
    for i in range(n):
        quality = 1 + i % 3
        words = rng.sample(VOCAB[quality], 4) + rng.sample(FILLER, 3)
        rng.shuffle(words)
        items.append((f"Patent {i} on method {i}", " ".join(words), quality))
    return items


def test_personalized_examples_reproduce_the_reviewers_own_scale(local_backend):
    """Reviewer A scores every item one point above reviewer B. Judging A's items, the judge
    fed A's own examples predicts A's scale; fed B's (aggregate) examples it is off by one."""
    rng = random.Random(42)
    items = synthetic_items(36, rng)
    backend = local_backend()
    hits = {"personalized": 0, "aggregate": 0}
    for t, (patent, idea, quality) in enumerate(items):
        a_score = quality + 1
        others = [(i, it) for i, it in enumerate(items) if i != t]
        picked = rng.sample(others, 9)
        for kind, offset in (("personalized", 1), ("aggregate", 0)):
            examples = tuple(
                Example(item_id=i, patent_text=p, idea_text=d, score=q + offset)
                for i, (p, d, q) in picked
            )
            reply = backend.judge(
                JudgeRequest(
                    dimension=SPECIFICITY, examples=examples, patent_text=patent, idea_text=idea
                )
            )
            hits[kind] += reply.score == a_score
    assert hits["personalized"] >= 0.6 * len(items)
    assert hits["aggregate"] <= 0.2 * len(items)
    assert hits["personalized"] > hits["aggregate"]


def test_the_same_examples_one_point_stricter_give_a_prediction_one_point_lower(local_backend):
    rng = random.Random(7)
    items = synthetic_items(30, rng)
    backend = local_backend()
    for t, (patent, idea, _) in enumerate(items):
        picked = rng.sample([it for i, it in enumerate(items) if i != t], 9)
        replies = [
            backend.judge(
                JudgeRequest(
                    dimension=SPECIFICITY,
                    examples=tuple(
                        Example(item_id=i, patent_text=p, idea_text=d, score=q + offset)
                        for i, (p, d, q) in enumerate(picked)
                    ),
                    patent_text=patent,
                    idea_text=idea,
                )
            )
            for offset in (0, 1)
        ]
        assert replies[1].score == replies[0].score + 1
        assert replies[1].confidence == replies[0].confidence


def test_it_votes_for_the_most_similar_examples_and_names_them(local_backend):
    examples = (
        Example(1, "Battery wear patent", "fleet dashboard predicts batteries failing", 4),
        Example(2, "Battery wear patent", "fleet batteries dashboard alerts", 4),
        Example(3, "Speech patent", "vague something for music", 1),
    )
    reply = local_backend().judge(
        make_request(
            examples=examples,
            patent_text="Battery patent",
            idea_text="dashboard for fleet batteries",
        )
    )
    assert reply.score == 4
    assert reply.error == "" and reply.attempts == 1
    assert reply.reason.startswith(LOCAL_BASELINE_LABEL)
    assert "score 4" in reply.reason and "example 1" in reply.reason
    assert 0 <= reply.confidence <= 100


def test_each_example_weighs_0_001_plus_its_similarity_and_ties_go_to_the_lower_score(
    local_backend,
):
    vectors = {
        0: np.array([1.0, 0.0, 0.0]),  # the target
        1: np.array([0.6, 0.8, 0.0]),  # similarity 0.6, score 4
        2: np.array([0.3, 0.0, np.sqrt(1 - 0.09)]),  # 0.3, score 2
        3: np.array([0.3, np.sqrt(1 - 0.09), 0.0]),  # 0.3, score 2
        4: np.array([0.0, 1.0, 0.0]),  # 0 (no word in common), score 1
        5: np.array([0.0, 0.0, 1.0]),  # 0, score 1
    }
    backend = local_backend(vectors={i: v.astype(np.float32) for i, v in vectors.items()})

    def judge(*scored):
        examples = tuple(
            Example(item_id=i, patent_text="p", idea_text="i", score=s, idea_id=i)
            for i, s in scored
        )
        return backend.judge(make_request(examples=examples, idea_id=0))

    # 4 weighs 0.601, 2 weighs 0.301 + 0.301 = 0.602: the two weaker examples win.
    assert judge((1, 4), (2, 2), (3, 2)).score == 2
    # 0.601 for 4 against 0.002 for 1: similarity decides.
    assert judge((1, 4), (4, 1), (5, 1)).score == 4
    # Two dissimilar examples weigh 0.001 each: a tie, and the lower score wins.
    assert judge((4, 3), (5, 1)).score == 1
    assert judge((5, 3), (4, 1)).score == 1


def test_unanimous_examples_give_high_confidence_and_split_ones_low(local_backend):
    same = tuple(Example(i, "p", f"idea {i} sensor", 3) for i in range(9))
    split = tuple(Example(i, "p", f"idea {i} sensor", 1 + i % 3) for i in range(9))
    sure = local_backend().judge(make_request(examples=same))
    unsure = local_backend().judge(make_request(examples=split))
    assert sure.score == 3 and sure.confidence >= 80  # nine of nine agree: 86 on four levels
    assert unsure.confidence < 60


def test_zero_shot_predicts_mid_scale_with_low_confidence_and_no_category(local_backend):
    backend = local_backend()
    for text in ("", "A vague thing.", "word " * 400 + " 12 34 56 78 90"):
        reply = backend.judge(make_request(examples=(), idea_text=text))
        assert reply.score in (2, 3)
        assert reply.confidence <= 30
        assert aggregate_seeds([(reply.score, reply.confidence)], threshold=80).score is None
        need = backend.judge(make_request(dimension=NEED, examples=(), idea_text=text))
        assert need.score in (1, 2, 3)  # never the "not B2B" category


def test_it_is_deterministic_and_labelled_as_not_an_llm(local_backend):
    backend = local_backend()
    assert backend.is_llm is False and backend.name == "local"
    assert backend.label == "Local baseline (not an LLM)"
    first, second = backend.judge(make_request()), backend.judge(make_request())
    assert (first.score, first.confidence, first.reason, first.prompt_fingerprint) == (
        second.score,
        second.confidence,
        second.reason,
        second.prompt_fingerprint,
    )


def test_the_seed_changes_nothing_the_local_backend_replies(local_backend):
    """Planning judges a local configuration once without examples, whatever its seeds
    (planning.seeds_judged): that holds only while the seed draws the examples and nothing
    else. With a panel and without."""
    from apps.judges.engine.panel import PanelScore

    backend = local_backend()
    panel = (PanelScore(7, 2, 2.5, 0.8, False), PanelScore(8, 4, 3.0, 0.9, False))
    for extra in ({}, {"panel": panel}):
        replies = [
            backend.judge(make_request(examples=(), seed=seed, **extra)) for seed in (0, 1, 5)
        ]
        seen = {(r.score, r.confidence, r.reason, r.prompt_fingerprint, r.signal) for r in replies}
        assert len(seen) == 1


def _stored_batch():
    """Requests over six items with stored vectors, mixed k (0, 1, 3, 9) and dimensions."""
    rng = np.random.default_rng(3)
    vectors = {i: v / np.linalg.norm(v) for i, v in enumerate(rng.random((12, 16), np.float32))}
    requests = []
    for t in range(12):
        for k in (0, 1, 3, 9):
            pool = [i for i in range(12) if i != t]
            ids = [pool[(t + 2 * j) % len(pool)] for j in range(k)]
            requests.append(
                make_request(
                    dimension=NEED if t % 2 else SPECIFICITY,
                    idea_id=t,
                    examples=tuple(
                        Example(
                            item_id=100 + i,
                            patent_text=f"p{i}",
                            idea_text=f"idea {i}",
                            score=(1 + (i * 7 + t) % 3),
                            idea_id=i,
                        )
                        for i in ids
                    ),
                )
            )
    return vectors, requests


def test_judge_batch_gives_the_same_replies_as_judging_one_by_one(local_backend):
    vectors, requests = _stored_batch()
    for backend in (local_backend(vectors=vectors), local_backend()):
        batch = backend.judge_batch(requests)
        alone = [backend.judge(r) for r in requests]
        assert [(r.score, r.confidence, r.reason, r.prompt_fingerprint) for r in batch] == [
            (r.score, r.confidence, r.reason, r.prompt_fingerprint) for r in alone
        ]


def test_it_uses_stored_vectors_when_given_and_text_otherwise(local_backend):
    examples = (
        Example(1, "p", "alpha words here", 4, idea_id=1),
        Example(2, "p", "beta words there", 1, idea_id=2),
    )
    request = make_request(examples=examples, idea_id=3, idea_text="beta words there")
    by_text = local_backend().judge(request)
    assert by_text.score == 1  # the target's text matches example 2
    # Stored vectors say the target is example 1's twin: the vectors win over the text.
    vectors = {
        1: np.array([1.0, 0.0], np.float32),
        2: np.array([0.0, 1.0], np.float32),
        3: np.array([1.0, 0.0], np.float32),
    }
    by_vector = local_backend(vectors=vectors).judge(request)
    assert by_vector.score == 4
    assert "most similar: example 1 (score 4, similarity 1.00)" in by_vector.reason


def test_zero_shot_says_it_has_no_evidence_and_falls_below_the_recommended_threshold(local_backend):
    reply = local_backend().judge(make_request(examples=()))
    assert "no evidence" in reply.reason
    assert reply.confidence < RECOMMENDED_THRESHOLD
