"""Forms of the screening pages, one module per form.

- ``screening``: the staged screening form of the rate page (ScreeningForm);
  ``names`` the names of its posted fields, ``display`` what it hands its template.
- ``decline``: DeclineForm, a reviewer declining an idea.
- ``filters``: RatingFilterForm, the managers' ratings table.
"""

from __future__ import annotations

from apps.screening.forms.decline import DeclineForm
from apps.screening.forms.display import (
    DimensionView,
    Given,
    KeptValue,
    LevelView,
    QuestionView,
    StageView,
)
from apps.screening.forms.filters import RatingFilterForm
from apps.screening.forms.names import (
    CONFIRM_NAME,
    YES_NO,
    answer_name,
    rationale_name,
    score_name,
    skip_name,
)
from apps.screening.forms.screening import ScreeningForm

__all__ = [
    "CONFIRM_NAME",
    "YES_NO",
    "DeclineForm",
    "DimensionView",
    "Given",
    "KeptValue",
    "LevelView",
    "QuestionView",
    "RatingFilterForm",
    "ScreeningForm",
    "StageView",
    "answer_name",
    "rationale_name",
    "score_name",
    "skip_name",
]
