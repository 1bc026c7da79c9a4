"""Staged screening rules as pure functions, shared by the form, the API and the importers.

A dimension is *open* when every dimension it requires is open, scored, and passes its own gate
(score > pass_above). Requirements always point to earlier dimensions, so one pass in rubric order
decides everything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from apps.core.errors import FieldError


@dataclass(frozen=True)
class DimensionRule:
    key: str
    scale_min: int
    scale_max: int
    pass_above: int | None = None
    requires: tuple[str, ...] = ()
    question_keys: tuple[str, ...] = ()
    question_scores: Mapping[str, int] = field(default_factory=dict)
    # Display name for messages; last so positional construction elsewhere keeps working.
    name: str = ""
    # An optional dimension may stay unanswered while open (stored as "not answered"); an
    # unanswered dimension does not pass its gate, so what it gates stays closed.
    optional: bool = False

    @property
    def label(self) -> str:
        return self.name or self.key

    def passes(self, score: int | None) -> bool:
        if score is None:
            return False
        return self.pass_above is None or score > self.pass_above

    def on_scale(self, score: int) -> bool:
        return self.scale_min <= score <= self.scale_max

    def score_from_answers(self, answers: Mapping[str, bool]) -> int | None:
        """Derive the score of a question-based dimension; None when an answer is missing."""
        if any(answers.get(q) is None for q in self.question_keys):
            return None
        combo = ",".join("yes" if answers[q] else "no" for q in self.question_keys)
        return self.question_scores.get(combo)

    def answers_for_score(self, score: int) -> dict[str, bool] | None:
        """The yes/no answers behind a score, when exactly one combination gives it.

        Imported ratings carry only the score; this lets the form show them as answers.
        """
        combos = [combo for combo, value in self.question_scores.items() if value == score]
        if len(combos) != 1:
            return None
        parts = combos[0].split(",")
        return {q: part == "yes" for q, part in zip(self.question_keys, parts, strict=True)}


def open_dimensions(rules: Sequence[DimensionRule], scores: Mapping[str, int | None]) -> list[str]:
    """Keys of the dimensions that are open given the (possibly partial) scores, in rubric order."""
    by_key = {r.key: r for r in rules}
    opened: list[str] = []
    open_set: set[str] = set()
    for rule in rules:
        if all(req in open_set and by_key[req].passes(scores.get(req)) for req in rule.requires):
            opened.append(rule.key)
            open_set.add(rule.key)
    return opened


def open_matrix(rules: Sequence[DimensionRule], scores: np.ndarray) -> np.ndarray:
    """`open_dimensions` for many screenings at once: `scores` is a (screenings x dimensions)
    float matrix in rubric order, NaN where a dimension is not scored; the result is a boolean
    matrix of the same shape, True where the dimension is open. The same rule, one column at a
    time, so a million-row ratings import is judged in numpy (tests/screening/test_gates.py
    checks the two agree on random screenings)."""
    n = scores.shape[0]
    index = {r.key: j for j, r in enumerate(rules)}
    is_open = np.zeros(scores.shape, dtype=bool)
    for j, rule in enumerate(rules):
        col_open = np.ones(n, dtype=bool)
        for req in rule.requires:
            k = index[req]
            s = scores[:, k]
            passes = ~np.isnan(s)
            if rules[k].pass_above is not None:
                passes &= np.nan_to_num(s, nan=-1e9) > rules[k].pass_above
            col_open &= is_open[:, k] & passes
        is_open[:, j] = col_open
    return is_open


def status_matrix(
    rules: Sequence[DimensionRule], scores: np.ndarray, is_open: np.ndarray | None = None
) -> np.ndarray:
    """`screening_statuses` for many screenings at once (see `open_matrix`): an object matrix
    of "scored", "unanswered" and "gated" (Rating.Status values). `is_open` is
    `open_matrix(rules, scores)` when the caller has it already. Like `screening_statuses`, it
    describes a valid screening: an open dimension left blank is "unanswered", and
    `validate_scores` says whether that is allowed."""
    if is_open is None:
        is_open = open_matrix(rules, scores)
    scored = ~np.isnan(scores)
    return np.where(is_open, np.where(scored, "scored", "unanswered"), "gated").astype(object)


def screening_statuses(
    rules: Sequence[DimensionRule], scores: Mapping[str, int | None]
) -> dict[str, str]:
    """The stored state of every dimension of a valid screening: "scored", "unanswered" (open
    optional left blank) or "gated" (closed: not rated by design). Values match Rating.Status."""
    is_open = set(open_dimensions(rules, scores))
    statuses: dict[str, str] = {}
    for rule in rules:
        if rule.key not in is_open:
            statuses[rule.key] = "gated"
        elif scores.get(rule.key) is None:
            statuses[rule.key] = "unanswered"
        else:
            statuses[rule.key] = "scored"
    return statuses


def closing_reason(
    rules: Sequence[DimensionRule], key: str, scores: Mapping[str, int | None]
) -> str:
    """Plain words for why a dimension is closed, naming the first upstream gate that failed."""
    by_key = {r.key: r for r in rules}
    for req in by_key[key].requires:
        rule = by_key[req]
        if not rule.passes(scores.get(req)):
            if scores.get(req) is None:
                return f"it opens only after {rule.label} is scored"
            return f"it opens only when {rule.label} is above {rule.pass_above}"
    return "it is closed"


def validate_scores(
    rules: Sequence[DimensionRule], scores: Mapping[str, int | None], *, row: int | None = None
) -> list[FieldError]:
    """Every gate and scale problem of one complete submission (one reviewer, one idea).

    Open required dimensions must be scored, open optional ones may be left unanswered, scores
    must be on scale, closed dimensions must be empty. Unknown keys are errors.
    """
    errors: list[FieldError] = []
    known = {r.key for r in rules}
    for key in scores:
        if key not in known:
            errors.append(
                FieldError(field=key, message="is not a dimension of this rubric", row=row)
            )
    is_open = set(open_dimensions(rules, scores))
    for rule in rules:
        score = scores.get(rule.key)
        if rule.key in is_open:
            if score is None:
                if rule.optional:
                    continue
                errors.append(
                    FieldError(field=rule.key, message="is required at this stage", row=row)
                )
            elif not rule.on_scale(score):
                errors.append(
                    FieldError(
                        field=rule.key,
                        message=f"must be between {rule.scale_min} and {rule.scale_max}",
                        row=row,
                        value=str(score),
                    )
                )
        elif score is not None:
            errors.append(
                FieldError(
                    field=rule.key,
                    message="must be left empty: " + closing_reason(rules, rule.key, scores),
                    row=row,
                    value=str(score),
                )
            )
    return errors
