"""The local baseline judge: a statistical scorer, NOT an LLM, that needs no network.

Label it "Local baseline (not an LLM)" wherever its predictions appear.

Panel first (issue 17): a request that carries other reviewers' scores on the target idea
(``JudgeRequest.panel``, never the target reviewer's own) is answered from them, standardised
per reviewer and mapped onto the examples' scale (``apps.judges.engine.panel``; signal
"panel"). Otherwise the text judge below answers (signal "text", or "level" when no example
shares a word with the target, and for zero-shot). On scales of more than VOTE_MAX_LEVELS
levels the text judge takes a sharpened weighted mean instead of the vote.

Text judge, few-shot (k >= 1), from the k examples only (so k keeps its meaning in studies). On
coarse scales the rule is issue 7's reference judge, exactly, so it is never below it:
- every item (patent + idea) is a sparse unit vector: stored TF-IDF vectors of its domain are
  passed in (``get_backend("local", vectors={idea_id: sparse row})``, see
  ``apps.judges.vectors``), otherwise the full texts are hashed
  (``apps.judges.engine.item_text.hash_item_vectors``);
- each example votes for its own score with weight 0.001 + cosine(target, example) (cosine
  clipped at 0), so the prediction stays on the reviewer's own scale (a strict reviewer's
  examples give strict predictions) and the 0.001 lets examples with no word in common still
  count, equally;
- the heaviest score wins. Tie rule: scores whose total weight is within TIE_TOLERANCE of the
  heaviest are tied (float sums of the same weights in another order must not decide), and the
  LOWEST tied score wins (the conservative choice; tests/judges/offline_eval.py's reference uses
  the same rule);
- raw confidence = the winner's share of the total weight, shrunk towards chance for small k:
  100 x (k x share + 0.5) / (k + 0.5 x levels). Nine unanimous examples on a 4-level scale
  give 86, one example 50. It overclaims (on the demo, unanimous examples are right far less
  often than 86 %): runs calibrate it on leave-one-out results (``apps.judges.engine.calibration``),
  after which it is a chance of being exactly right.

Zero-shot (k = 0): there is no evidence about the reviewer's scale, so it predicts near the
middle of the scale, nudged by how detailed the idea text is, with confidence at most
ZERO_SHOT_MAX_CONFIDENCE (below RECOMMENDED_THRESHOLD), never calibrated, and says so in its
reason.

``judge_batch(requests)`` is vectorised (one sparse similarity computation for the batch, numpy
votes); ``judge(request)`` is a batch of one and gives the same reply.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import numpy as np
from scipy import sparse

from apps.judges.backends.local_sparse import sparse_row, sparse_width
from apps.judges.engine import panel as panel_method
from apps.judges.engine.item_text import HASH_FEATURES, hash_item_vectors
from apps.judges.engine.judgment import (
    LOCAL_BASELINE_LABEL,
    Example,
    JudgeReply,
    JudgeRequest,
)

# The rule itself lives in engine.text_rule, shared with the measurement of item text parts.
from apps.judges.engine.text_rule import (
    BASE_WEIGHT,
    VOTE_MAX_LEVELS,
    sharpen,
    vote,
    weighted_mean,
)

MODEL_NAME = "local-panel-text-v4"
ZERO_SHOT_MAX_CONFIDENCE = 20
# The confidence threshold recommended for local configurations: the lowest that still discards
# zero-shot ("no evidence"). Few-shot predictions are the reference judge's own, so discarding
# any of them can only make a final differ from the reference's, by chance: on the demo, 25
# already pushed a personalized cell below it (seed 1). Calibrated few-shot confidences below 21
# (chance of being exactly right under 21 %) are rare: 0-0.06 % of personalized predictions on
# the demo. Measured in docs/decisions/0006-local-confidence-threshold-21.md.
RECOMMENDED_THRESHOLD = ZERO_SHOT_MAX_CONFIDENCE + 1
# Smoothing of the vote share into a chance of being exactly right, for small k.
SMOOTHING = 0.5
# Up to this many distinct items, one Gram matrix of the batch; past it, one dot product per
# (target, example) pair, REQUEST_CHUNK requests at a time.
GRAM_MAX_ITEMS = 3000
REQUEST_CHUNK = 4096


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


def _text_key(example: Example) -> str:
    return hashlib.sha256(f"{example.patent_text}\n{example.idea_text}".encode()).hexdigest()


def local_fingerprint(request: JudgeRequest, parts: dict[int, str] | None = None) -> str:
    """What identifies a local judgment: dimension, target and example ids (or their texts
    when no ids are given). A cheap stand-in for the prompt fingerprint: the local judge never
    builds a prompt.

    `parts` keeps the text of each example and panel object by its id while the requests of a
    batch hold them: every seed and k of a target share its panel, many units an example."""
    d = request.dimension
    if request.idea_id is not None:
        target = f"idea:{request.idea_id}"
    else:
        target = hashlib.sha256(f"{request.patent_text}\n{request.idea_text}".encode()).hexdigest()
    parts = {} if parts is None else parts
    examples = ",".join([_part(parts, e, _example_part) for e in request.examples])
    panel = _part(parts, request.panel, _panel_part)
    key = f"{MODEL_NAME}|{d.key}|{d.scale_min}-{d.scale_max}|{target}|{examples}|{panel}"
    return hashlib.sha256(key.encode()).hexdigest()


def _part(parts: dict[int, str], obj: object, render: Callable[[Any], str]) -> str:
    text = parts.get(id(obj))
    if text is None:
        text = parts[id(obj)] = render(obj)
    return text


def _example_part(e: Example) -> str:
    return f"{e.item_id}:{e.idea_id if e.idea_id is not None else _text_key(e)}:{e.score}"


def _panel_part(panel: Sequence[panel_method.PanelScore]) -> str:
    return ",".join(f"{p.reviewer_id}:{p.score}:{p.mean:.4f}:{p.spread:.4f}" for p in panel)


class LocalBackend:
    name = "local"
    is_llm = False
    label = LOCAL_BASELINE_LABEL

    def __init__(self, *, vectors: Mapping[int, object] | None = None, **_ignored: object) -> None:
        # Other options (model, timeout...) are accepted and ignored so callers can pass one
        # option set to any backend.
        self.vectors: Mapping[int, object] = vectors or {}

    # ------------------------------------------------------------------ public

    def judge(self, request: JudgeRequest) -> JudgeReply:
        return self.judge_batch([request])[0]

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        started = time.perf_counter()
        replies: list[JudgeReply | None] = [None] * len(requests)
        # Each panel summarised once for the batch (its seeds, k and kinds share it), by the
        # ids of its tuple and dimension, which the requests hold while it runs.
        summaries: dict[tuple[int, int], panel_method.PanelSummary] = {}
        for i, request in enumerate(requests):
            if request.panel:
                key = (id(request.panel), id(request.dimension))
                if key not in summaries:
                    d = request.dimension
                    summaries[key] = panel_method.PanelSummary(
                        request.panel,
                        scale_min=d.scale_min,
                        scale_max=d.scale_max,
                        categories=d.categories,
                    )
                replies[i] = self._panel(request, summaries[key])
        few = [i for i, r in enumerate(requests) if replies[i] is None and r.examples]
        for i, request in enumerate(requests):
            if replies[i] is None and not request.examples:
                replies[i] = self._zero_shot(request)
        if few:
            for i, few_reply in zip(few, self._few_shot([requests[i] for i in few]), strict=True):
                replies[i] = few_reply
        per_request_ms = int((time.perf_counter() - started) * 1000 / max(1, len(requests)))
        done: list[JudgeReply] = []
        parts: dict[int, str] = {}
        for request, reply in zip(requests, replies, strict=True):
            assert reply is not None
            reply.prompt_fingerprint = local_fingerprint(request, parts)
            reply.latency_ms = per_request_ms
            done.append(reply)
        return done

    # ------------------------------------------------------------------ panel

    def _panel(
        self, request: JudgeRequest, summary: panel_method.PanelSummary
    ) -> JudgeReply | None:
        """The other reviewers' scores (`summary`, of the request's panel) mapped onto the
        examples' scale (engine.panel); None when none of them gave a usable score (the text
        judge answers instead)."""
        scores = [e.score for e in request.examples]
        pred = summary.predict(scores)
        if pred is None:
            return None
        k = len(scores)
        if pred.spread == 0.0:
            how = f"{pred.panel_size} other reviewers mostly gave the category {pred.score}"
        else:
            onto = (
                f"mapped onto the level {pred.level:.2f} and spread {pred.spread:.2f} of the "
                f"{k} example{'s' if k != 1 else ''}"
                if k
                else f"mapped onto the panel's own average level {pred.level:.2f} and spread "
                f"{pred.spread:.2f} (no examples of this reviewer's scale)"
            )
            how = (
                f"{pred.panel_size} other reviewer{'s' if pred.panel_size != 1 else ''} scored "
                f"this idea; each standardised by their own mean and spread, on average "
                f"z = {pred.z:+.2f}, {onto}: {pred.value:.2f}"
            )
        return JudgeReply(
            score=pred.score,
            reason=f"{LOCAL_BASELINE_LABEL}, panel signal: {how}.",
            confidence=pred.confidence,
            raw="",
            attempts=1,
            model=MODEL_NAME,
            signal="panel",
            panel_size=pred.panel_size,
        )

    # ------------------------------------------------------------------ zero-shot

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
            f"{LOCAL_BASELINE_LABEL}: no examples, so no evidence of how this reviewer scores; "
            f"the score sits near the middle of the {d.scale_min}-{d.scale_max} scale, adjusted "
            f"by how detailed the idea text is (cue {position:.2f}). Low confidence."
        )
        return JudgeReply(
            score=score,
            reason=reason,
            confidence=confidence,
            raw="",
            attempts=1,
            model=MODEL_NAME,
            signal="level",
        )

    # ------------------------------------------------------------------ few-shot

    def _item_matrix(
        self, requests: Sequence[JudgeRequest]
    ) -> tuple[sparse.csr_matrix, np.ndarray, np.ndarray]:
        """Unique item vectors (sparse rows of one matrix) and, per request, the row of its
        target and of each example (-1 pads requests with fewer examples than the longest)."""
        kmax = max(len(r.examples) for r in requests)
        target_rows = np.empty(len(requests), dtype=np.int64)
        example_rows = np.full((len(requests), kmax), -1, dtype=np.int64)
        rows: dict[tuple[str, object], int] = {}
        for n, request in enumerate(requests):
            # A request uses stored vectors only if its target and all its examples have one,
            # so its similarities all come from one space; otherwise all its items are hashed.
            ids = [request.idea_id, *(e.idea_id for e in request.examples)]
            if all(i is not None and i in self.vectors for i in ids):
                keys: list[tuple[str, object]] = [("v", i) for i in ids]
            else:
                keys = [
                    ("t", (request.patent_text, request.idea_text)),
                    *(("t", (e.patent_text, e.idea_text)) for e in request.examples),
                ]
            for j, key in enumerate(keys):
                row = rows.setdefault(key, len(rows))
                if j == 0:
                    target_rows[n] = row
                else:
                    example_rows[n, j - 1] = row
        return self._stack(rows), target_rows, example_rows

    def _stack(self, rows: dict[tuple[str, object], int]) -> sparse.csr_matrix:
        """One sparse matrix (float64) of the distinct items: stored vectors in the first
        columns, hashed ones after them (the two never meet in one request)."""
        # "v" keys carry an idea id (see _item_matrix).
        stored = [(row, cast(int, key[1])) for key, row in rows.items() if key[0] == "v"]
        hashed = [(row, key[1]) for key, row in rows.items() if key[0] == "t"]
        width_stored = max((sparse_width(self.vectors[i]) for _, i in stored), default=0)
        parts: list[tuple[np.ndarray, np.ndarray]] = [(np.empty(0, np.int64), np.empty(0))] * len(
            rows
        )
        for row, idea_id in stored:
            parts[row] = sparse_row(self.vectors[idea_id])
        if hashed:
            matrix = hash_item_vectors([texts for _, texts in hashed])  # type: ignore[misc]
            for n, (row, _) in enumerate(hashed):
                lo, hi = matrix.indptr[n], matrix.indptr[n + 1]
                parts[row] = (
                    matrix.indices[lo:hi].astype(np.int64) + width_stored,
                    matrix.data[lo:hi].astype(np.float64),
                )
        width = width_stored + (HASH_FEATURES if hashed else 0)
        indptr = np.concatenate([[0], np.cumsum([len(i) for i, _ in parts])])
        return sparse.csr_matrix(
            (
                np.concatenate([v for _, v in parts]),
                np.concatenate([i for i, _ in parts]),
                indptr,
            ),
            shape=(len(rows), max(width, 1)),
        )

    @staticmethod
    def _similarities(
        matrix: sparse.csr_matrix, target_rows: np.ndarray, example_rows: np.ndarray
    ) -> np.ndarray:
        """Cosine of each request's target with each of its examples, clipped at 0 (0 for
        padding)."""
        safe = np.where(example_rows >= 0, example_rows, 0)
        if matrix.shape[0] <= GRAM_MAX_ITEMS:
            gram = (matrix @ matrix.T).toarray()
            sims = gram[target_rows[:, None], safe]
        else:
            sims = np.zeros(example_rows.shape)
            for start in range(0, len(target_rows), REQUEST_CHUNK):
                stop = start + REQUEST_CHUNK
                targets = matrix[target_rows[start:stop]]
                for j in range(example_rows.shape[1]):
                    product = targets.multiply(matrix[safe[start:stop, j]])
                    sims[start:stop, j] = np.asarray(product.sum(axis=1)).ravel()
        return np.where(example_rows >= 0, np.clip(sims, 0.0, None), 0.0)

    def _few_shot(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        matrix, target_rows, example_rows = self._item_matrix(requests)
        present = example_rows >= 0
        sims = self._similarities(matrix, target_rows, example_rows)
        lows = np.array([r.dimension.scale_min for r in requests], dtype=np.int64)
        highs = np.array([r.dimension.scale_max for r in requests], dtype=np.int64)
        scores = np.zeros(example_rows.shape, dtype=np.int64)
        for i, request in enumerate(requests):
            scores[i, : len(request.examples)] = [e.score for e in request.examples]
        n_levels = highs - lows + 1
        width = int(n_levels.max())
        n = example_rows.shape[0]
        votes, winner = vote(sims, present, scores, lows, width)
        share = votes[np.arange(n), winner] / votes.sum(axis=1)
        k = present.sum(axis=1)
        confidence = np.rint(100 * (k * share + SMOOTHING) / (k + SMOOTHING * n_levels))
        predicted = lows + winner
        # Fine scales: a vote over many levels is in effect one nearest neighbour; the weighted
        # mean of the examples' scores instead; confidence = the (smoothed) weight share of
        # examples within the scale's tolerance of it.
        fine = n_levels > VOTE_MAX_LEVELS
        if fine.any():
            weights = np.where(present, BASE_WEIGHT + sharpen(sims), 0.0)
            total = weights.sum(axis=1)
            mean = weighted_mean(sims, present, scores)
            tol = np.array(
                [
                    panel_method.tolerance(r.dimension.scale_min, r.dimension.scale_max)
                    for r in requests
                ]
            )
            within = (np.abs(scores - mean[:, None]) <= tol[:, None] + 0.5) & present
            near = (weights * within).sum(axis=1) / total
            predicted = np.where(fine, np.clip(np.rint(mean), lows, highs), predicted).astype(int)
            confidence = np.where(
                fine, np.rint(100 * (k * near + SMOOTHING) / (k + 2 * SMOOTHING)), confidence
            )
        signals = np.where(sims.max(axis=1, initial=0.0) > 0, "text", "level")
        return [
            JudgeReply(
                score=int(predicted[i]),
                reason=self._reason(request, sims[i], int(predicted[i]), float(share[i])),
                confidence=int(np.clip(confidence[i], 0, 100)),
                raw="",
                attempts=1,
                model=MODEL_NAME,
                signal=str(signals[i]),
            )
            for i, request in enumerate(requests)
        ]

    @staticmethod
    def _reason(request: JudgeRequest, sims: np.ndarray, score: int, share: float) -> str:
        examples = request.examples
        k = len(examples)
        agreeing = sum(1 for e in examples if e.score == score)
        order = np.argsort(-sims[:k], kind="stable")[:2]
        nearest = ", ".join(
            f"example {int(j) + 1} (score {examples[int(j)].score}, similarity {sims[int(j)]:.2f})"
            for j in order
        )
        return (
            f"{LOCAL_BASELINE_LABEL}: {agreeing} of {k} example{'s' if k != 1 else ''} "
            f"scored {score}, {share:.0%} of the similarity-weighted vote "
            f"(each example weighs 0.001 + its similarity); most similar: {nearest}."
        )
