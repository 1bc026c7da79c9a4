"""The local baseline judge: a statistical scorer, NOT an LLM, that needs no network.

Label it "Local baseline (not an LLM)" wherever its predictions appear.

Few-shot (k >= 1), from the k examples only (so k keeps its meaning in studies):
- every item (patent + idea) is a vector; stored vectors are passed in
  (``get_backend("local", vectors={idea_id: unit vector})``, see ``apps.judges.vectors``),
  otherwise the texts are hashed (``apps.judges.item_text.hash_item_vectors``);
- each example's weight is softmax(cosine(target, example) / temperature), temperature 0.3: an
  example 0.3 more similar weighs e (2.7x) as much. Flatter than a nearest-neighbour vote on
  purpose: on the demo, text similarity says little about which score a reviewer gives, and a
  sharp vote follows noise (docs/notes/offline.md has the measurements);
- the examples vote for their own scores with those weights, so the prediction stays on the
  reviewer's own scale (a strict reviewer's examples give strict predictions). The heaviest
  score wins; ties go to the score closest to the weighted mean, then to the lower score;
- raw confidence = the smoothed chance that the reviewer gives exactly that score, estimated
  from the weighted votes: 100 x (n x share + 0.5) / (n + 0.5 x levels), n = the effective
  number of examples 1 / sum(weight^2) (k for equal weights, 1 when one example dominates).
  Nine unanimous, equally weighted examples on a 4-level scale give 86, one example 50. It
  overclaims (on the demo, 86 is right 63 % of the time): runs calibrate it on leave-one-out
  results (``apps.judges.calibration``), after which it is a chance of being exactly right.

Zero-shot (k = 0): there is no evidence about the reviewer's scale, so it predicts near the
middle of the scale, nudged by how detailed the idea text is, with confidence at most 20
(below RECOMMENDED_THRESHOLD, 25), and says so in its reason.

``judge_batch(requests)`` is vectorised (one similarity computation for the batch, numpy
votes); ``judge(request)`` is a batch of one and gives the same reply.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Mapping, Sequence

import numpy as np

from apps.judges.backends.base import (
    LOCAL_BASELINE_LABEL,
    Example,
    JudgeReply,
    JudgeRequest,
)
from apps.judges.item_text import hash_item_vectors

MODEL_NAME = "local-similarity-vote-v2"
# The confidence threshold recommended for local configurations. Calibrated confidences are
# chances of being exactly right (about 30-65 on the demo): 25 keeps every personalized target
# and >= 98 % of aggregate ones on the demo (30 already drops half of some aggregate cells), and
# discards zero-shot (at most 20). Measured in docs/notes/offline.md.
RECOMMENDED_THRESHOLD = 25
ZERO_SHOT_MAX_CONFIDENCE = 20
DEFAULT_TEMPERATURE = 0.3
# Sharper weightings a request may switch to when its examples show that similarity predicts
# their scores (leave-one-out among the examples), and by how many more exact hits.
SHARPER_TEMPERATURES = (0.05, 0.1)
SHARPER_MARGIN = 3
GRAM_MAX_ITEMS = 3000
# Dirichlet smoothing of the vote share into a chance of being exactly right.
SMOOTHING = 0.5


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


def local_fingerprint(request: JudgeRequest) -> str:
    """What identifies a local judgment: dimension, target and example ids (or their texts
    when no ids are given). A cheap stand-in for the prompt fingerprint: the local judge never
    builds a prompt."""
    d = request.dimension
    if request.idea_id is not None:
        target = f"idea:{request.idea_id}"
    else:
        target = hashlib.sha256(f"{request.patent_text}\n{request.idea_text}".encode()).hexdigest()
    examples = ",".join(
        f"{e.item_id}:{e.idea_id if e.idea_id is not None else _text_key(e)}:{e.score}"
        for e in request.examples
    )
    key = f"{MODEL_NAME}|{d.key}|{d.scale_min}-{d.scale_max}|{target}|{examples}"
    return hashlib.sha256(key.encode()).hexdigest()


def _votes(
    sims: np.ndarray,
    offsets: np.ndarray,
    present: np.ndarray,
    width: int,
    temperature: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Similarity-weighted votes per level (rows sum to 1) and the weights themselves."""
    n, k = sims.shape
    z = np.where(present, sims / temperature[:, None], -np.inf)
    top = z.max(axis=1, keepdims=True)
    z = z - np.where(np.isfinite(top), top, 0.0)  # a row with no example keeps zero weights
    weights = np.where(present, np.exp(z), 0.0)
    weights = weights / np.maximum(weights.sum(axis=1, keepdims=True), 1e-300)
    votes = np.zeros((n, width))
    np.add.at(votes, (np.repeat(np.arange(n), k), offsets.ravel()), weights.ravel())
    return votes, weights


def _winner(votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The heaviest level; ties: closest to the weighted mean, then the lower level."""
    levels = np.arange(votes.shape[1])
    mean = (votes * levels).sum(axis=1)
    tied = votes >= votes.max(axis=1, keepdims=True) - 1e-9
    distance = np.where(tied, np.abs(levels[None, :] - mean[:, None]), np.inf)
    winner = np.argmin(distance + levels[None, :] * 1e-7, axis=1)
    return winner, votes[np.arange(len(votes)), winner]


class LocalBackend:
    name = "local"
    is_llm = False
    label = LOCAL_BASELINE_LABEL

    def __init__(
        self,
        *,
        vectors: Mapping[int, np.ndarray] | None = None,
        temperature: float = DEFAULT_TEMPERATURE,
        adaptive: bool = True,
        **_ignored: object,
    ) -> None:
        # Other options (model, timeout...) are accepted and ignored so callers can pass one
        # option set to any backend.
        self.vectors: Mapping[int, np.ndarray] = vectors or {}
        self.temperature = max(float(temperature), 1e-6)
        self.adaptive = bool(adaptive)

    # ------------------------------------------------------------------ public

    def judge(self, request: JudgeRequest) -> JudgeReply:
        return self.judge_batch([request])[0]

    def judge_batch(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        started = time.perf_counter()
        replies: list[JudgeReply | None] = [None] * len(requests)
        few = [i for i, r in enumerate(requests) if r.examples]
        for i, request in enumerate(requests):
            if not request.examples:
                replies[i] = self._zero_shot(request)
        if few:
            for i, reply in zip(few, self._few_shot([requests[i] for i in few]), strict=True):
                replies[i] = reply
        per_request_ms = int((time.perf_counter() - started) * 1000 / max(1, len(requests)))
        done: list[JudgeReply] = []
        for request, reply in zip(requests, replies, strict=True):
            assert reply is not None
            reply.prompt_fingerprint = local_fingerprint(request)
            reply.latency_ms = per_request_ms
            done.append(reply)
        return done

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
        )

    # ------------------------------------------------------------------ few-shot

    def _item_matrix(
        self, requests: Sequence[JudgeRequest]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unique item vectors U and, per request, the row of its target and of each example
        (-1 pads requests with fewer examples than the longest)."""
        kmax = max(len(r.examples) for r in requests)
        target_rows = np.empty(len(requests), dtype=np.int64)
        example_rows = np.full((len(requests), kmax), -1, dtype=np.int64)
        rows: dict[object, int] = {}
        stored: list[np.ndarray] = []
        texts: list[tuple[str, str]] = []
        # A request uses stored vectors only if its target and all its examples have one, so
        # its similarities all come from one space; otherwise all of its items are hashed.
        keys: list[list[object]] = []
        for request in requests:
            ids = [request.idea_id, *(e.idea_id for e in request.examples)]
            if all(i is not None and i in self.vectors for i in ids):
                keys.append([("v", i) for i in ids])
            else:
                items = [(request.patent_text, request.idea_text)] + [
                    (e.patent_text, e.idea_text) for e in request.examples
                ]
                keys.append([("t", item) for item in items])
        for n, request_keys in enumerate(keys):
            for j, key in enumerate(request_keys):
                row = rows.get(key)
                if row is None:
                    row = rows[key] = len(rows)
                    if key[0] == "v":
                        stored.append(np.asarray(self.vectors[key[1]], dtype=np.float32))
                        texts.append(("", ""))
                    else:
                        stored.append(np.empty(0, dtype=np.float32))
                        texts.append(key[1])  # type: ignore[arg-type]
                if j == 0:
                    target_rows[n] = row
                else:
                    example_rows[n, j - 1] = row
        return self._stack(rows, stored, texts), target_rows, example_rows

    @staticmethod
    def _stack(
        rows: dict[object, int], stored: list[np.ndarray], texts: list[tuple[str, str]]
    ) -> np.ndarray:
        hashed_rows = [row for key, row in rows.items() if key[0] == "t"]  # type: ignore[index]
        stored_rows = [row for key, row in rows.items() if key[0] == "v"]  # type: ignore[index]
        width_stored = max((len(stored[r]) for r in stored_rows), default=0)
        hashed = hash_item_vectors([texts[r] for r in hashed_rows])
        # Stored and hashed vectors never meet in one request: pad both into one matrix.
        width = width_stored + (hashed.shape[1] if hashed_rows else 0)
        matrix = np.zeros((len(rows), max(width, 1)), dtype=np.float32)
        for r in stored_rows:
            vector = stored[r]
            matrix[r, : len(vector)] = vector
        if hashed_rows:
            matrix[np.asarray(hashed_rows), width_stored:] = hashed
        return matrix

    @staticmethod
    def _similarities(
        matrix: np.ndarray,
        gram: np.ndarray | None,
        target_rows: np.ndarray,
        example_rows: np.ndarray,
    ) -> np.ndarray:
        safe = np.where(example_rows >= 0, example_rows, 0)
        if gram is not None:
            sims = gram[target_rows[:, None], safe]
        else:
            sims = np.empty(example_rows.shape, dtype=np.float32)
            for start in range(0, len(target_rows), 512):
                stop = start + 512
                sims[start:stop] = np.einsum(
                    "nd,nkd->nk", matrix[target_rows[start:stop]], matrix[safe[start:stop]]
                )
        return np.clip(sims, 0.0, 1.0)

    def _few_shot(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        matrix, target_rows, example_rows = self._item_matrix(requests)
        present = example_rows >= 0
        # A Gram matrix of the distinct items (a batch holds one domain's items or a few
        # thousand at most); past GRAM_MAX_ITEMS, one dot product per needed pair instead.
        gram = matrix @ matrix.T if len(matrix) <= GRAM_MAX_ITEMS else None
        sims = self._similarities(matrix, gram, target_rows, example_rows)

        lows = np.array([r.dimension.scale_min for r in requests], dtype=np.int64)
        highs = np.array([r.dimension.scale_max for r in requests], dtype=np.int64)
        scores = np.zeros(example_rows.shape, dtype=np.int64)
        for i, request in enumerate(requests):
            scores[i, : len(request.examples)] = [e.score for e in request.examples]
        n_levels = highs - lows + 1
        width = int(n_levels.max())
        offsets = np.where(present, np.clip(scores - lows[:, None], 0, width - 1), 0)

        temperature = self._temperatures(matrix, gram, example_rows, offsets, present, width)
        votes, weights = _votes(sims, offsets, present, width, temperature)
        winner, share = _winner(votes)
        # Effective number of examples (Kish): k for equal weights, 1 when one example dominates.
        k_eff = 1.0 / np.square(weights).sum(axis=1)
        confidence = np.rint(
            100 * (k_eff * share + SMOOTHING) / (k_eff + SMOOTHING * n_levels)
        ).astype(int)
        predicted = lows + winner

        replies = []
        for i, request in enumerate(requests):
            replies.append(
                JudgeReply(
                    score=int(predicted[i]),
                    reason=self._reason(
                        request,
                        sims[i],
                        int(predicted[i]),
                        float(share[i]),
                        float(temperature[i]),
                    ),
                    confidence=int(np.clip(confidence[i], 0, 100)),
                    raw="",
                    attempts=1,
                    model=MODEL_NAME,
                )
            )
        return replies

    def _temperatures(
        self,
        matrix: np.ndarray,
        gram: np.ndarray | None,
        example_rows: np.ndarray,
        offsets: np.ndarray,
        present: np.ndarray,
        width: int,
    ) -> np.ndarray:
        """Per request, how sharply similarity weighs: the default, unless the examples show
        that their own texts predict their scores. Each example is predicted from the others
        (leave-one-out) at every candidate temperature; a sharper one is used only if it gets
        at least SHARPER_MARGIN more examples exactly right than the default. Computed once
        per distinct example set (most targets of a reviewer share one)."""
        n, kmax = example_rows.shape
        result = np.full(n, self.temperature)
        if kmax < 3 or not self.adaptive:
            return result
        key = np.concatenate([example_rows, offsets], axis=1)
        unique, inverse = np.unique(key, axis=0, return_inverse=True)
        inverse = np.asarray(inverse).ravel()
        rows_u, offsets_u = unique[:, :kmax], unique[:, kmax:]
        present_u = rows_u >= 0
        safe_u = np.where(present_u, rows_u, 0)
        if gram is not None:
            among = np.clip(gram[safe_u[:, :, None], safe_u[:, None, :]], 0.0, 1.0)
        else:
            vectors = matrix[safe_u]  # sets x k x d
            among = np.clip(np.einsum("skd,sjd->skj", vectors, vectors), 0.0, 1.0)
        candidates = (*SHARPER_TEMPERATURES, self.temperature)
        hits = np.zeros((len(candidates), len(unique)))
        for j in range(kmax):
            others = present_u.copy()
            others[:, j] = False
            usable = present_u[:, j] & others.any(axis=1)
            if not usable.any():
                continue
            for c, temperature in enumerate(candidates):
                votes, _ = _votes(
                    among[:, j, :],
                    offsets_u,
                    others,
                    width,
                    np.full(len(unique), temperature),
                )
                winner, _ = _winner(votes)
                hits[c] += usable & (winner == offsets_u[:, j])
        sharp = np.argmax(hits[:-1], axis=0)  # the sharpest among equals
        use_sharp = hits[sharp, np.arange(len(unique))] >= hits[-1] + SHARPER_MARGIN
        chosen = np.where(use_sharp, np.asarray(SHARPER_TEMPERATURES)[sharp], self.temperature)
        return chosen[inverse]

    @staticmethod
    def _reason(
        request: JudgeRequest, sims: np.ndarray, score: int, share: float, temperature: float
    ) -> str:
        examples = request.examples
        k = len(examples)
        agreeing = sum(1 for e in examples if e.score == score)
        order = np.argsort(-sims[:k], kind="stable")[:2]
        nearest = ", ".join(
            f"example {int(j) + 1} (score {examples[int(j)].score}, similarity {sims[int(j)]:.2f})"
            for j in order
        )
        weighting = (
            ""
            if temperature >= DEFAULT_TEMPERATURE
            else " (the examples' own texts predict their scores, so similarity weighs more)"
        )
        return (
            f"{LOCAL_BASELINE_LABEL}: {agreeing} of {k} example{'s' if k != 1 else ''} "
            f"scored {score}, {share:.0%} of the similarity-weighted vote{weighting}; "
            f"most similar: {nearest}."
        )
