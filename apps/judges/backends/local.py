"""The local baseline judge: a statistical scorer, NOT an LLM, that needs no network.

Label it "Local baseline (not an LLM)" wherever its predictions appear.

Few-shot (k >= 1): the target (patent + idea text) and each example are turned into TF-IDF
vectors (word unigrams and bigrams, English stop words removed, sublinear tf; the vocabulary is
fitted on the request's own texts), and the cosine similarity of the target to every example is
computed. Each example votes for its score with weight softmax(similarity / temperature); the
score with the largest total weight wins. Ties go to the score closest to the weighted mean,
then to a seeded draw (so the seed matters only on exact ties).
Confidence = 100 x (winner's share of the weight) x k / (k + 0.5): agreement among similar
examples, shrunk for tiny k (one example cannot make the judge sure).

Because the vote is over the examples' own scores, a personalized judge (examples from the
target reviewer) reproduces that reviewer's scale: a strict reviewer's examples give strict
predictions. That is the effect the paper measures, in its simplest form.

Zero-shot (k = 0): there is nothing to calibrate on, so it predicts near the middle of the
scale, nudged by how detailed and specific the idea text is (length, numbers, distinct words),
with low confidence (at most 30), which the usual threshold of 80 discards.
"""

from __future__ import annotations

import math
import random
import re
import time

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from apps.judges.backends.base import (
    LOCAL_BASELINE_LABEL,
    JudgeReply,
    JudgeRequest,
)
from apps.judges.prompting import build_messages, prompt_fingerprint

MODEL_NAME = "local-tfidf-vote-v1"
ZERO_SHOT_MAX_CONFIDENCE = 30


def _similarities(target: str, examples: list[str]) -> np.ndarray:
    vectorizer = TfidfVectorizer(
        ngram_range=(1, 2), stop_words="english", sublinear_tf=True, norm="l2"
    )
    try:
        matrix = vectorizer.fit_transform([target, *examples])
    except ValueError:  # every text empty or only stop words: no evidence either way
        return np.zeros(len(examples))
    sims = (matrix[1:] @ matrix[0].T).toarray().ravel()
    return np.clip(sims, 0.0, 1.0)


def _softmax(values: np.ndarray, temperature: float) -> np.ndarray:
    z = values / max(temperature, 1e-6)
    z = z - z.max()
    w = np.exp(z)
    return w / w.sum()


_WORD = re.compile(r"[A-Za-z][A-Za-z-]{2,}")
_NUMBER = re.compile(r"\d")


def specificity_position(text: str) -> float:
    """A weak, rubric-free cue in [0, 1]: longer, more varied, more quantified texts score
    higher. Used only when there are no examples."""
    words = _WORD.findall(text)
    if not words:
        return 0.0
    distinct = len({w.lower() for w in words})
    length_cue = min(1.0, math.log1p(len(words)) / math.log1p(300))
    variety_cue = min(1.0, distinct / 150)
    numbers_cue = min(1.0, len(_NUMBER.findall(text)) / 10)
    return 0.5 * length_cue + 0.35 * variety_cue + 0.15 * numbers_cue


class LocalBackend:
    name = "local"
    is_llm = False
    label = LOCAL_BASELINE_LABEL

    def __init__(self, *, temperature: float = 0.1, **_ignored: object) -> None:
        # Softmax temperature over cosine similarities (which mostly lie in 0-0.5): 0.1 lets an
        # example 0.1 more similar weigh e (2.7x) as much. Other options (model, timeout...) are
        # accepted and ignored so callers can pass one option set to any backend.
        self.temperature = float(temperature)

    def judge(self, request: JudgeRequest) -> JudgeReply:
        started = time.perf_counter()
        messages = build_messages(request)
        reply = self._few_shot(request) if request.examples else self._zero_shot(request)
        reply.prompt_fingerprint = prompt_fingerprint(messages)
        reply.latency_ms = int((time.perf_counter() - started) * 1000)
        return reply

    def _zero_shot(self, request: JudgeRequest) -> JudgeReply:
        d = request.dimension
        degrees = [s for s in range(d.scale_min, d.scale_max + 1) if s not in d.categories]
        degrees = degrees or list(range(d.scale_min, d.scale_max + 1))
        position = specificity_position(request.idea_text)
        # Stay within the middle half of the scale: the cue is weak.
        lo, hi = 0.25, 0.75
        index = round((lo + (hi - lo) * position) * (len(degrees) - 1))
        score = degrees[index]
        confidence = round(10 + (ZERO_SHOT_MAX_CONFIDENCE - 10) * abs(position - 0.5) * 2)
        reason = (
            f"{LOCAL_BASELINE_LABEL}: no examples, so the score sits near the middle of the "
            f"{d.scale_min}-{d.scale_max} scale, adjusted by how detailed the idea text is "
            f"(specificity cue {position:.2f}); low confidence."
        )
        return JudgeReply(
            score=score, reason=reason, confidence=confidence, raw="", attempts=1,
            model=MODEL_NAME,
        )

    def _few_shot(self, request: JudgeRequest) -> JudgeReply:
        examples = list(request.examples)
        target = f"{request.patent_text}\n{request.idea_text}"
        sims = _similarities(target, [f"{e.patent_text}\n{e.idea_text}" for e in examples])
        weights = _softmax(sims, self.temperature)

        totals: dict[int, float] = {}
        for example, weight in zip(examples, weights, strict=True):
            totals[example.score] = totals.get(example.score, 0.0) + float(weight)
        best = max(totals.values())
        tied = sorted(s for s, w in totals.items() if math.isclose(w, best, rel_tol=1e-9))
        if len(tied) > 1:
            mean = sum(float(w) * e.score for e, w in zip(examples, weights, strict=True))
            closest = min(abs(s - mean) for s in tied)
            tied = [s for s in tied if math.isclose(abs(s - mean), closest, abs_tol=1e-9)]
        score = tied[0] if len(tied) == 1 else random.Random(request.seed).choice(tied)

        k = len(examples)
        share = totals[score]
        confidence = max(0, min(100, round(100 * share * k / (k + 0.5))))
        order = np.argsort(-sims, kind="stable")[:3]
        nearest = ", ".join(
            f"example {int(i) + 1} (score {examples[int(i)].score}, similarity {sims[int(i)]:.2f})"
            for i in order
        )
        reason = (
            f"{LOCAL_BASELINE_LABEL}: most similar {nearest}; "
            f"score {score} carries {share:.0%} of the similarity-weighted vote over {k} "
            f"example{'s' if k != 1 else ''}."
        )
        return JudgeReply(
            score=score, reason=reason, confidence=confidence, raw="", attempts=1,
            model=MODEL_NAME,
        )
