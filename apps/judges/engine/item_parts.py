"""Which parts of an item the offline judge's text fallback should read, measured per domain.

Pure (no Django). The text fallback (apps/judges/backends/local.py) compares a target with the
reviewer's examples by the cosine of their TF-IDF vectors (apps/judges/engine/item_text.py).
Which text goes into those vectors matters more than any weighting: on real summary ratings
the idea text carried 2,500 characters of a source story that no other item shares, so every
similarity was noise and the judge reached alpha 0.02. So the parts are chosen per domain by
measurement, not by habit.

The measurement replays the text-only judge in leave-one-out on the domain's own ratings, once
per candidate (``item_text.PARTS``: idea + source, idea only, source only), with the same
examples for every candidate:

1. for each reviewer, dimension and scored idea (the target; at most MAX_TARGETS per reviewer
   and dimension, a seeded sample), ``k`` of the reviewer's other scored ideas on the dimension
   are drawn as examples (seeded; ``seeds`` draws);
2. the vectors of every rated idea are fitted on the candidate's text (one TF-IDF per domain,
   as stored), and the judge's own text rule (apps/judges/engine/text_rule.py: the weighted
   vote on coarse scales, the sharpened weighted mean on fine ones) predicts the target;
3. the candidate's figure is the **per-reviewer alpha** (ordinal Krippendorff's alpha between
   the predictions and one reviewer's scores over that reviewer's targets, averaged over
   reviewers with at least MIN_TARGETS targets, then over dimensions; docs/metrics-
   definitions.md): it asks whether the text orders ideas like the reviewer, which is the only
   thing the parts change (every candidate sees the same examples, hence the same level). The
   pooled alpha (the paper's figure) and the level-only baseline's pooled alpha (the examples'
   mean) are reported beside it.

The choice is the candidate with the highest figure; candidates within MARGIN of the best are
tied and the first of ``candidates`` wins (the full text first: what the LLM judges see). With
no figure at all (too few ratings) the default stays and the reason says so.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from apps.disagreement.analysis.alpha import krippendorff_alpha
from apps.judges.engine import text_rule
from apps.judges.engine.item_text import DEFAULT_PARTS, PARTS, check_parts, fit_item_vectors

K = 9  # examples per target (the paper's largest k, the automatic runs' default)
SEEDS = (0, 1, 2)  # example draws averaged over
MIN_TARGETS = 8  # targets a reviewer needs on a dimension for a per-reviewer alpha
MARGIN = 0.01  # figures closer than this to the best are a tie
# Targets per reviewer and dimension at most (a seeded sample past it): enough for a
# per-reviewer alpha, and a domain of 50 reviewers x 2,000 ideas x 6 dimensions stays seconds.
MAX_TARGETS = 60
# Up to this many rated ideas, one dense Gram matrix; past it, one dot product per pair.
GRAM_MAX_ITEMS = 4000


@dataclass(frozen=True)
class PartsFigure:
    parts: str
    per_reviewer_alpha: float | None  # mean over dimensions of the per-reviewer figure
    pooled_alpha: float | None  # mean over dimensions of the pooled alpha
    reviewers: int  # reviewer x dimension cells behind the per-reviewer figure


@dataclass(frozen=True)
class PartsChoice:
    parts: str
    reason: str
    figures: tuple[PartsFigure, ...] = ()
    baseline_pooled_alpha: float | None = None  # the level-only baseline, same targets
    n_targets: int = 0  # leave-one-out predictions per candidate (all draws)
    k: int = K
    per_dimension: dict[str, dict[str, float | None]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) or math.isinf(x) else round(float(x), 4)


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(float(np.mean(kept)), 4) if kept else None


def _alpha(truth: np.ndarray, pred: np.ndarray, values: list[float]) -> float | None:
    if len(truth) < 2:
        return None
    return _finite(krippendorff_alpha(np.vstack([truth, pred]).astype(float), "ordinal", values))


def _draw(
    ratings: Iterable[tuple[int, int, str, int]],
    *,
    k: int,
    seeds: Sequence[int],
    max_targets: int = MAX_TARGETS,
) -> dict[str, np.ndarray]:
    """The leave-one-out design: one row per (draw, target), with its examples (-1 = none)."""
    cells: dict[tuple[int, str], dict[int, int]] = defaultdict(dict)
    for idea_id, reviewer_id, dimension, score in ratings:
        cells[(int(reviewer_id), str(dimension))][int(idea_id)] = int(score)
    rows: dict[str, list[Any]] = defaultdict(list)
    for seed in seeds:
        for reviewer_id, dimension in sorted(cells):
            cell = cells[(reviewer_id, dimension)]
            if len(cell) < 2:
                continue
            ideas = np.array(sorted(cell), dtype=np.int64)
            scores = np.array([cell[i] for i in ideas], dtype=np.int64)
            rng = np.random.default_rng([seed, reviewer_id, zlib.crc32(dimension.encode())])
            targets: Sequence[int] = range(len(ideas))
            if len(ideas) > max_targets:
                sample = np.random.default_rng([reviewer_id, zlib.crc32(dimension.encode())])
                targets = sorted(sample.choice(len(ideas), size=max_targets, replace=False))
            for t in targets:
                others = np.delete(np.arange(len(ideas)), t)
                take = rng.choice(others, size=min(k, len(others)), replace=False)
                padded = np.full(k, -1, dtype=np.int64)
                padded[: len(take)] = take
                rows["reviewer"].append(reviewer_id)
                rows["dimension"].append(dimension)
                rows["target"].append(ideas[t])
                rows["truth"].append(scores[t])
                rows["example_ideas"].append(np.where(padded >= 0, ideas[padded], -1))
                rows["example_scores"].append(np.where(padded >= 0, scores[padded], 0))
    if not rows:
        return {}
    return {
        "reviewer": np.array(rows["reviewer"], dtype=np.int64),
        "dimension": np.array(rows["dimension"], dtype=object),
        "target": np.array(rows["target"], dtype=np.int64),
        "truth": np.array(rows["truth"], dtype=np.int64),
        "example_ideas": np.vstack(rows["example_ideas"]),
        "example_scores": np.vstack(rows["example_scores"]),
    }


def _similarities(matrix: Any, target_rows: np.ndarray, example_rows: np.ndarray) -> np.ndarray:
    safe = np.where(example_rows >= 0, example_rows, 0)
    if matrix.shape[0] <= GRAM_MAX_ITEMS:
        gram = (matrix @ matrix.T).toarray()
        sims = gram[target_rows[:, None], safe]
    else:
        sims = np.zeros(example_rows.shape)
        targets = matrix[target_rows]
        for j in range(example_rows.shape[1]):
            sims[:, j] = np.asarray(targets.multiply(matrix[safe[:, j]]).sum(axis=1)).ravel()
    return np.where(example_rows >= 0, np.clip(sims, 0.0, None), 0.0)


def _figures(
    design: dict[str, np.ndarray],
    pred: np.ndarray,
    scales: Mapping[str, tuple[int, int]],
) -> tuple[dict[str, float | None], dict[str, float | None], int]:
    """Per dimension: the per-reviewer figure and the pooled alpha; and the cells behind."""
    per_reviewer: dict[str, float | None] = {}
    pooled: dict[str, float | None] = {}
    cells = 0
    for dimension in sorted(set(design["dimension"])):
        lo, hi = scales[dimension]
        values = [float(v) for v in range(lo, hi + 1)]
        on = design["dimension"] == dimension
        truth, p, reviewers = design["truth"][on], pred[on], design["reviewer"][on]
        pooled[dimension] = _alpha(truth, p, values)
        alphas = []
        for reviewer_id in np.unique(reviewers):
            mine = reviewers == reviewer_id
            if len(np.unique(design["target"][on][mine])) < MIN_TARGETS:
                continue
            a = _alpha(truth[mine], p[mine], values)
            if a is not None:
                alphas.append(a)
        cells += len(alphas)
        per_reviewer[dimension] = _mean(alphas)
    return per_reviewer, pooled, cells


def measure_item_parts(
    texts: Mapping[int, tuple[str, str]],
    ratings: Iterable[tuple[int, int, str, int]],
    scales: Mapping[str, tuple[int, int]],
    *,
    k: int = K,
    seeds: Sequence[int] = SEEDS,
    candidates: Sequence[str] = PARTS,
) -> PartsChoice:
    """Measure the candidates on one domain and choose (module docstring).

    ``texts``: idea id -> (source text, idea text), every idea of the domain (the TF-IDF is
    fitted on them all, as stored); ``ratings``: (idea id, reviewer id, dimension key, score)
    of scored ratings; ``scales``: dimension key -> (scale min, scale max)."""
    for parts in candidates:
        check_parts(parts)
    if k < 1:
        raise ValueError(f"k must be at least 1; got {k}")
    rated = [r for r in ratings if int(r[0]) in texts and str(r[2]) in scales]
    design = _draw(rated, k=k, seeds=seeds)
    if not design:
        return PartsChoice(
            parts=DEFAULT_PARTS,
            reason="no reviewer has two scored ideas on a dimension: nothing to measure, "
            "the full text is kept",
            k=k,
        )
    ids = sorted(texts)
    row_of = {idea_id: n for n, idea_id in enumerate(ids)}
    target_rows = np.array([row_of[int(i)] for i in design["target"]], dtype=np.int64)
    example_rows = np.vectorize(lambda i: row_of.get(int(i), -1), otypes=[np.int64])(
        design["example_ideas"]
    )
    present = example_rows >= 0
    lows = np.array([scales[d][0] for d in design["dimension"]], dtype=np.int64)
    highs = np.array([scales[d][1] for d in design["dimension"]], dtype=np.int64)
    scores = design["example_scores"]

    n_examples = present.sum(axis=1)
    level = np.floor(np.where(present, scores, 0).sum(axis=1) / n_examples + 0.5)
    _, base_pooled, _ = _figures(design, level.astype(np.int64), scales)

    figures = []
    per_dimension: dict[str, dict[str, float | None]] = {}
    for parts in candidates:
        matrix = fit_item_vectors([texts[i] for i in ids], parts)
        sims = _similarities(matrix, target_rows, example_rows)
        pred = text_rule.predict(sims, present, scores, lows, highs)
        per_reviewer, pooled, cells = _figures(design, pred, scales)
        per_dimension[parts] = per_reviewer
        figures.append(
            PartsFigure(parts, _mean(per_reviewer.values()), _mean(pooled.values()), cells)
        )

    scored = [f for f in figures if f.per_reviewer_alpha is not None]
    key = "per-reviewer alpha"
    if not scored:
        scored = [f for f in figures if f.pooled_alpha is not None]
        key = "pooled alpha"

    def figure_of(f: PartsFigure) -> float:
        value = f.per_reviewer_alpha if key == "per-reviewer alpha" else f.pooled_alpha
        return float(value) if value is not None else -math.inf

    common = {
        "figures": tuple(figures),
        "baseline_pooled_alpha": _mean(base_pooled.values()),
        "n_targets": int(len(design["target"])),
        "k": k,
        "per_dimension": per_dimension,
    }
    if not scored:
        return PartsChoice(
            parts=DEFAULT_PARTS,
            reason="no alpha is defined on these ratings: the full text is kept",
            **common,  # type: ignore[arg-type]
        )
    best = max(figure_of(f) for f in scored)
    chosen = next(f for f in scored if figure_of(f) >= best - MARGIN)
    others = ", ".join(f"{f.parts} {figure_of(f):+.3f}" for f in scored if f.parts != chosen.parts)
    reason = (
        f"{chosen.parts}: {key} {figure_of(chosen):+.3f} of the text-only judge in "
        f"leave-one-out (k = {k}, {len(seeds)} draws); {others or 'no other candidate'}"
    )
    if figure_of(chosen) < best:
        reason += f" (within {MARGIN} of the best: a tie, the first candidate kept)"
    return PartsChoice(parts=chosen.parts, reason=reason, **common)  # type: ignore[arg-type]
