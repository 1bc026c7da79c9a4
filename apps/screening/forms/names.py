"""Names of the screening form's posted fields, one home for the form, its template and tests.

Each field is named after the dimension key (``score-specificity``, ``answer-novelty-q1``...), so
any rubric gets its own fields.
"""

from __future__ import annotations

from apps.screening.models import Dimension

YES_NO = [("yes", "Yes"), ("no", "No")]


def score_name(dim: Dimension) -> str:
    return f"score-{dim.key}"


def answer_name(dim: Dimension, question_key: str) -> str:
    return f"answer-{dim.key}-{question_key}"


def rationale_name(dim: Dimension) -> str:
    return f"rationale-{dim.key}"


def skip_name(dim: Dimension) -> str:
    return f"skip-{dim.key}"


# The hidden field carrying which warnings the reviewer has seen and accepted (see warnings()).
CONFIRM_NAME = "confirm"


def yes_no(value: str) -> bool:
    return value == "yes"
