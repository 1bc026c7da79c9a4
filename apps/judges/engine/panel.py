"""The panel signal of the offline judge: what the OTHER reviewers gave the target idea.

Plain Python (no Django, no numpy in the per-request path: a panel is a handful of numbers and
600,000 requests must take seconds).

The method (issue 17):
1. every other reviewer who scored the target idea on the dimension is standardised by their
   own mean and spread on that dimension: z = (score - mean) / spread. A strict reviewer's 2
   and a lenient reviewer's 4 can both mean "above my usual";
2. the panel's z-scores are averaged;
3. the average is put back on a scale with the mean and spread of the request's examples:
   personalized -> the target reviewer's k examples (their level and spread), aggregate -> the
   other reviewers' k examples, zero-shot (no examples) -> the panel's own average level and
   spread (a "typical reviewer" of the panel, since nothing is known about the target);
4. the result is rounded to the nearest level of the scale, clipped to it. No shrinking towards
   the mean: on real ratings a fitted slope lost alignment; the reviewer's spread is kept.

The spread of k examples is unreliable for small k (one example has none), so it is pooled
with the panel's typical spread, as if that were SPREAD_PRIOR more examples.

What is never used: the target reviewer's own score on the target idea, on this dimension or
any other. ``PanelIndex.panel(idea, exclude_reviewer=target)`` leaves the target reviewer out
entirely; their examples come from other ideas (apps.judges.engine.examples).

Categories (PBIG's 0 = "not a B2B product") are not degrees: members who gave a category are
not standardised; when they are the panel's majority, the category is predicted.

Confidence (raw, 0-100, calibrated later like every raw confidence): the chance that a normal
error with the panel's standard error (members disagreeing -> larger) plus the mapping's own
error (fewer examples -> larger) lands within the scale's tolerance
(``apps.judges.engine.calibration.tolerance``) of the prediction.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# The example spread is pooled with the panel's typical spread as if it were this many more
# examples (k = 1 -> the panel's spread; k = 9 -> mostly the examples').
SPREAD_PRIOR = 2.0
# A reviewer's spread is at least this share of a level (someone who always gives 3 is not
# infinitely informative when they give a 4).
MIN_SPREAD_LEVELS = 0.5
# A reviewer with fewer scored ideas than this on a dimension gets the dimension's pooled
# spread (one or two scores say nothing about spread).
MIN_SCORES_FOR_OWN_SPREAD = 3


@dataclass(frozen=True)
class PanelScore:
    """One other reviewer's score on the target idea, with their own scale on the dimension."""

    reviewer_id: int
    score: int
    mean: float  # the reviewer's mean on the dimension (degrees only)
    spread: float  # the reviewer's standard deviation there (floored), > 0
    is_category: bool = False


@dataclass(frozen=True)
class PanelPrediction:
    score: int
    value: float  # before rounding
    z: float  # the panel's mean z-score
    panel_size: int  # members standardised (degree scores)
    level: float  # the mean the z was mapped with
    spread: float  # the spread it was mapped with
    confidence: int  # raw, 0-100


def tolerance(scale_min: int, scale_max: int) -> int:
    """How far from the truth still counts as right, in levels: 0 on scales of up to 6 levels
    (exact match), otherwise a tenth of the range, at least 1 (a 1-7 scale: 1; 0-100: 10).
    One home for the rule: calibration, the coverage figures and the panel's confidence."""
    levels = scale_max - scale_min + 1
    if levels <= 6:
        return 0
    return max(1, round((scale_max - scale_min) / 10))


def level_only(example_scores: Sequence[int]) -> int | None:
    """The level-only baseline: the mean of the examples' scores, rounded half up; None
    without examples. What a judge must beat to show it judges ideas, not only levels."""
    if not example_scores:
        return None
    return int(math.floor(sum(example_scores) / len(example_scores) + 0.5))


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(var)


class PanelIndex:
    """Who scored what on one dimension, and each reviewer's own scale there.

    Built from (idea_id, reviewer_id, score) rows of one domain and dimension: the example pool
    of a run (apps.judges.services.execution) or an evaluation frame."""

    def __init__(
        self,
        rows: Iterable[tuple[int, int, int]],
        *,
        scale_min: int,
        scale_max: int,
        categories: Iterable[int] = (),
    ) -> None:
        self.scale_min = int(scale_min)
        self.scale_max = int(scale_max)
        self.categories = frozenset(int(c) for c in categories)
        self._by_idea: dict[int, list[tuple[int, int]]] = defaultdict(list)
        degrees: dict[int, list[float]] = defaultdict(list)
        for idea_id, reviewer_id, score in rows:
            self._by_idea[int(idea_id)].append((int(reviewer_id), int(score)))
            if int(score) not in self.categories:
                degrees[int(reviewer_id)].append(float(score))
        floor = MIN_SPREAD_LEVELS
        own = {r: _mean_sd(v) for r, v in degrees.items()}
        spreads = [sd for r, (_, sd) in own.items() if len(degrees[r]) >= MIN_SCORES_FOR_OWN_SPREAD]
        pooled = sum(spreads) / len(spreads) if spreads else (self.scale_max - self.scale_min) / 4
        self.pooled_spread = max(floor, pooled)
        self.scale: dict[int, tuple[float, float]] = {}
        for r, (mean, sd) in own.items():
            if len(degrees[r]) < MIN_SCORES_FOR_OWN_SPREAD:
                sd = self.pooled_spread
            self.scale[r] = (mean, max(floor, sd))

    def panel(self, idea_id: int, *, exclude_reviewer: int) -> tuple[PanelScore, ...]:
        """The other reviewers' scores on the idea; the excluded (target) reviewer never
        appears, whatever they scored."""
        out = []
        for reviewer_id, score in self._by_idea.get(int(idea_id), ()):
            if reviewer_id == int(exclude_reviewer):
                continue
            is_category = score in self.categories
            mean, spread = self.scale.get(reviewer_id, (float(score), self.pooled_spread))
            out.append(PanelScore(reviewer_id, score, mean, spread, is_category))
        out.sort(key=lambda p: p.reviewer_id)
        return tuple(out)


def _mapping(degree: Sequence[PanelScore], examples: Sequence[float]) -> tuple[float, float, int]:
    """(level, spread, k) the panel's z-scores are mapped with (module docstring, step 3)."""
    n = len(degree)
    panel_spread = sum(p.spread for p in degree) / n
    if examples:
        k = len(examples)
        level, sd = _mean_sd(examples)
        spread = math.sqrt(
            ((k - 1) * sd**2 + SPREAD_PRIOR * panel_spread**2) / (k - 1 + SPREAD_PRIOR)
        )
    else:
        k = 0
        level = sum(p.mean for p in degree) / n
        spread = panel_spread
    return level, max(MIN_SPREAD_LEVELS, spread), k


@dataclass(frozen=True)
class PanelEvidence:
    """The other reviewers' scores on the target idea, each put on the target's scale: what an
    LLM judge's prompt shows when its configuration asks for panel evidence."""

    mapped: tuple[float, ...]  # one per member who gave a degree, in reviewer order
    categories: tuple[tuple[int, int], ...]  # (category level, members who gave it)
    level: float  # the level and spread the members were mapped with
    spread: float
    k: int  # examples behind the mapping (0: the panel's own typical scale)


def evidence(
    panel: Sequence[PanelScore],
    example_scores: Sequence[int],
    *,
    scale_min: int,
    scale_max: int,
    categories: Iterable[int] = (),
) -> PanelEvidence | None:
    """Each other reviewer's score standardised by their own mean and spread and put on the
    examples' scale with the same mapping as ``predict`` (clipped to the scale, not rounded);
    None without other reviewers. The target reviewer is never in ``panel``
    (``PanelIndex.panel`` leaves them out)."""
    if not panel:
        return None
    cats = frozenset(int(c) for c in categories)
    degree = [p for p in panel if not p.is_category]
    counts: dict[int, int] = defaultdict(int)
    for p in panel:
        if p.is_category:
            counts[p.score] += 1
    examples = [float(s) for s in example_scores if int(s) not in cats]
    if not degree:
        return PanelEvidence((), tuple(sorted(counts.items())), 0.0, 0.0, len(examples))
    level, spread, k = _mapping(degree, examples)
    lo = min((s for s in range(scale_min, scale_max + 1) if s not in cats), default=scale_min)
    mapped = tuple(
        min(float(scale_max), max(float(lo), level + spread * (p.score - p.mean) / p.spread))
        for p in degree
    )
    return PanelEvidence(mapped, tuple(sorted(counts.items())), level, spread, k)


def _normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def predict(
    panel: Sequence[PanelScore],
    example_scores: Sequence[int],
    *,
    scale_min: int,
    scale_max: int,
    categories: Iterable[int] = (),
) -> PanelPrediction | None:
    """The panel's prediction on the scale of the examples (module docstring); None when no
    other reviewer scored the idea."""
    return PanelSummary(
        panel, scale_min=scale_min, scale_max=scale_max, categories=categories
    ).predict(example_scores)


class PanelSummary:
    """What `predict` takes from one panel, computed once: every seed, k and kind of a target
    reads the same panel with other examples (13 units a rating in an evaluation)."""

    def __init__(
        self,
        panel: Sequence[PanelScore],
        *,
        scale_min: int,
        scale_max: int,
        categories: Iterable[int] = (),
    ) -> None:
        self.scale_min, self.scale_max = scale_min, scale_max
        self.cats = cats = frozenset(int(c) for c in categories)
        # The answer whatever the examples: none (no panel, or no member who gave a degree),
        # or the category most of the panel gave.
        self.fixed: PanelPrediction | None = None
        self.has_degrees = False
        if not panel:
            return
        degree = [p for p in panel if not p.is_category]
        category = [p for p in panel if p.is_category]
        if category and len(category) * 2 > len(panel):
            counts: dict[int, int] = defaultdict(int)
            for p in category:
                counts[p.score] += 1
            chosen = min(counts, key=lambda c: (-counts[c], c))
            share = counts[chosen] / len(panel)
            self.fixed = PanelPrediction(
                score=chosen,
                value=float(chosen),
                z=0.0,
                panel_size=len(panel),
                level=float(chosen),
                spread=0.0,
                confidence=int(round(100 * share * len(panel) / (len(panel) + 1))),
            )
            return
        if not degree:
            return
        self.has_degrees = True
        self.degree = degree
        zs = [(p.score - p.mean) / p.spread for p in degree]
        self.n = n = len(zs)
        self.z = sum(zs) / n
        self.z_sd = _mean_sd(zs)[1] if n > 1 else 1.0
        self.lo = min(
            (s for s in range(scale_min, scale_max + 1) if s not in cats), default=scale_min
        )
        self.half = tolerance(scale_min, scale_max) + 0.5

    def predict(self, example_scores: Sequence[int]) -> PanelPrediction | None:
        if not self.has_degrees:
            return self.fixed
        cats = self.cats
        examples = [float(s) for s in example_scores if int(s) not in cats]
        n, z = self.n, self.z
        level, spread, k = _mapping(self.degree, examples)
        value = level + spread * z
        score = int(min(self.scale_max, max(self.lo, math.floor(value + 0.5))))
        # Error of the prediction, in levels: the panel's disagreement (standard error of its
        # mean z, at least one member's worth of noise shared), the level's error from k
        # examples.
        se_panel = spread * math.sqrt((self.z_sd**2 + 0.25) / n)
        se_level = spread / math.sqrt(k) if k else spread
        sigma = math.sqrt(se_panel**2 + se_level**2)
        offset = value - score
        inside = _normal_cdf((self.half - offset) / sigma) - _normal_cdf(
            (-self.half - offset) / sigma
        )
        return PanelPrediction(
            score=score,
            value=value,
            z=z,
            panel_size=n,
            level=level,
            spread=spread,
            confidence=int(max(1, min(99, round(100 * inside)))),
        )
