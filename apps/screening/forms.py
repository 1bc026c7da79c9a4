"""Forms of the screening pages.

The staged screening form is built from the Dimension rows of the idea's rubric, so any rubric
works (other dimensions, scales, gates, or no gates at all). Which stages are open is decided on
the server from the values posted so far, with the same gate functions the service enforces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django import forms

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.core.errors import FieldError
from apps.screening.gates import open_dimensions
from apps.screening.models import Dimension, Rating
from apps.screening.services.ratings import resolve_scores

YES_NO = [("yes", "Yes"), ("no", "No")]


def score_name(dim: Dimension) -> str:
    return f"score-{dim.key}"


def answer_name(dim: Dimension, question_key: str) -> str:
    return f"answer-{dim.key}-{question_key}"


def rationale_name(dim: Dimension) -> str:
    return f"rationale-{dim.key}"


def _yes_no(value: str) -> bool:
    return value == "yes"


@dataclass
class LevelView:
    value: int
    meaning: str
    checked: bool
    is_category: bool


@dataclass
class QuestionView:
    key: str
    text: str
    name: str
    answer: bool | None


@dataclass
class DimensionView:
    dim: Dimension
    name: str
    levels: list[LevelView]
    questions: list[QuestionView]
    rationale_name: str
    rationale: str
    derived_score: int | None
    errors: list[str] = field(default_factory=list)

    @property
    def derived_meaning(self) -> str:
        return self.dim.level_meaning(self.derived_score) if self.derived_score is not None else ""


@dataclass
class StageView:
    number: int
    dimensions: list[Dimension]
    is_open: bool
    opens_when: str
    # Open stages carry their fields; closed ones only say why they are closed.
    fields: list[DimensionView] = field(default_factory=list)
    closed_because: str = ""

    @property
    def names(self) -> str:
        return ", ".join(d.name for d in self.dimensions)


def _stage_depths(dimensions: Sequence[Dimension]) -> dict[str, int]:
    """Stage of each dimension: 0 without requirements, else one past its deepest requirement.

    Requirements always point to earlier dimensions, so one pass in rubric order suffices.
    """
    depth: dict[str, int] = {}
    for dim in dimensions:
        depth[dim.key] = 1 + max((depth.get(r, 0) for r in dim.requires), default=-1)
    return depth


class ScreeningForm(forms.Form):
    """One reviewer's scores, yes/no answers and rationales for one idea."""

    def __init__(self, *args: Any, dimensions: Sequence[Dimension], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dimensions = list(dimensions)
        self.by_key = {d.key: d for d in self.dimensions}
        # Errors the service reported, by dimension key ("" for the whole submission).
        self.dimension_errors: dict[str, list[str]] = {}
        for dim in self.dimensions:
            if dim.questions:
                for q in dim.questions:
                    self.fields[answer_name(dim, q["key"])] = forms.TypedChoiceField(
                        choices=YES_NO,
                        coerce=_yes_no,
                        required=False,
                        empty_value=None,
                        label=q["text"],
                    )
            else:
                self.fields[score_name(dim)] = forms.IntegerField(
                    required=False,
                    label=dim.name,
                    error_messages={"invalid": "must be a whole number"},
                )
            self.fields[rationale_name(dim)] = forms.CharField(
                required=False, max_length=4000, label=f"{dim.name} rationale"
            )

    @staticmethod
    def initial_from(
        dimensions: Sequence[Dimension], ratings: Mapping[str, Rating]
    ) -> dict[str, Any]:
        """Pre-fill from the reviewer's current ratings; gated and declined ones start empty."""
        initial: dict[str, Any] = {}
        for dim in dimensions:
            rating = ratings.get(dim.key)
            if rating is None or rating.status != Rating.Status.SCORED:
                continue
            if dim.questions:
                saved = rating.answers or dim.rule().answers_for_score(rating.score) or {}
                for q in dim.questions:
                    answer = saved.get(q["key"])
                    if answer is not None:
                        initial[answer_name(dim, q["key"])] = bool(answer)
            else:
                initial[score_name(dim)] = rating.score
            initial[rationale_name(dim)] = rating.rationale
        return initial

    # Values -----------------------------------------------------------------------------------

    def _value(self, name: str) -> Any:
        """The cleaned value when bound (invalid fields count as empty), else the initial one."""
        if self.is_bound:
            self.is_valid()
            return self.cleaned_data.get(name)
        return self.initial.get(name)

    def payload(self) -> tuple[dict[str, int | None], dict[str, dict[str, bool]], dict[str, str]]:
        """(scores, answers, rationales) in the shape rating_submit takes."""
        scores: dict[str, int | None] = {}
        answers: dict[str, dict[str, bool]] = {}
        rationales: dict[str, str] = {}
        for dim in self.dimensions:
            if dim.questions:
                given = {q["key"]: self._value(answer_name(dim, q["key"])) for q in dim.questions}
                given = {k: v for k, v in given.items() if v is not None}
                if given:
                    answers[dim.key] = given
            else:
                score = self._value(score_name(dim))
                if score is not None:
                    scores[dim.key] = score
            text = (self._value(rationale_name(dim)) or "").strip()
            if text:
                rationales[dim.key] = text
        return scores, answers, rationales

    def merged_scores(self) -> dict[str, int | None]:
        """Scores with question-based ones derived from the answers (when all are given)."""
        scores, answers, _ = self.payload()
        merged, _errors = resolve_scores(self.dimensions, scores, answers)
        return merged

    def open_keys(self) -> list[str]:
        return open_dimensions([d.rule() for d in self.dimensions], self.merged_scores())

    def is_complete(self) -> bool:
        merged = self.merged_scores()
        return all(merged.get(k) is not None for k in self.open_keys())

    # Errors -----------------------------------------------------------------------------------

    def add_service_errors(self, errors: Sequence[FieldError]) -> None:
        for error in errors:
            key = error.field if error.field in self.by_key else ""
            self.dimension_errors.setdefault(key, []).append(error.message)

    def all_errors(self) -> list[tuple[str, str]]:
        """(label, message) for every problem, form-level and service-level, for the summary box."""
        out: list[tuple[str, str]] = []
        if self.is_bound:
            self.is_valid()
            for name, field_messages in self.errors.items():
                label = self.fields[name].label if name in self.fields else ""
                out += [(str(label or ""), str(m)) for m in field_messages]
        for key, service_messages in self.dimension_errors.items():
            out += [(self.by_key[key].name if key else "", m) for m in service_messages]
        return out

    def _field_errors(self, dim: Dimension) -> list[str]:
        messages = list(self.dimension_errors.get(dim.key, []))
        if self.is_bound:
            self.is_valid()
            names = [score_name(dim), rationale_name(dim)] + [
                answer_name(dim, q["key"]) for q in dim.questions
            ]
            for name in names:
                messages += [str(m) for m in self.errors.get(name, [])]
        return messages

    # Presentation -----------------------------------------------------------------------------

    def stages(self) -> list[StageView]:
        """The rubric as ordered stages; open ones carry their fields, closed ones their reason."""
        merged = self.merged_scores()
        open_set = set(self.open_keys())
        depths = _stage_depths(self.dimensions)
        # A stage is the dimensions sharing one set of requirements, ordered by depth.
        grouped: dict[tuple[int, tuple[str, ...]], list[Dimension]] = {}
        for dim in self.dimensions:
            grouped.setdefault((depths[dim.key], tuple(dim.requires)), []).append(dim)
        stages: list[StageView] = []
        for number, ((_depth, required), dims) in enumerate(
            sorted(grouped.items(), key=lambda kv: (kv[0][0], kv[1][0].position))
        ):
            conditions = [self._condition(self.by_key[r]) for r in required if r in self.by_key]
            stage = StageView(
                number=number + 1,
                dimensions=dims,
                is_open=all(d.key in open_set for d in dims),
                opens_when=" and ".join(conditions),
            )
            if stage.is_open:
                stage.fields = [self._dimension_view(d, merged) for d in dims]
            else:
                stage.closed_because = self._closed_because(list(required), merged)
            stages.append(stage)
        return stages

    @staticmethod
    def _condition(dim: Dimension) -> str:
        if dim.pass_above is None:
            return f"{dim.name} is rated"
        return f"{dim.name} is above {dim.pass_above}"

    def _closed_because(self, required: list[str], merged: Mapping[str, int | None]) -> str:
        """'waiting' while an upstream score is missing, 'closed' once one fails its gate."""
        for key in required:
            dim = self.by_key.get(key)
            if dim is None:
                continue
            score = merged.get(key)
            if score is not None and not dim.rule().passes(score):
                return "closed"
        return "waiting"

    def _dimension_view(self, dim: Dimension, merged: Mapping[str, int | None]) -> DimensionView:
        current = self._value(score_name(dim)) if not dim.questions else merged.get(dim.key)
        categories = {int(c) for c in dim.categories}
        return DimensionView(
            dim=dim,
            name=score_name(dim),
            levels=[
                LevelView(value=v, meaning=m, checked=(current == v), is_category=v in categories)
                for v, m in dim.level_choices()
            ],
            questions=[
                QuestionView(
                    key=q["key"],
                    text=q["text"],
                    name=answer_name(dim, q["key"]),
                    answer=self._value(answer_name(dim, q["key"])),
                )
                for q in dim.questions
            ],
            rationale_name=rationale_name(dim),
            rationale=self._value(rationale_name(dim)) or "",
            derived_score=merged.get(dim.key) if dim.questions else None,
            errors=self._field_errors(dim),
        )


class DeclineForm(forms.Form):
    reason = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why (optional)",
    )
    confirm = forms.BooleanField(
        required=True,
        label="Yes, remove this idea from my queue. It cannot be rated afterwards.",
        error_messages={"required": "tick this box to confirm that you want to decline"},
    )


class _ReviewerChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: User) -> str:  # type: ignore[override]
        return f"{obj.display_name} ({obj.username})"


class RatingFilterForm(forms.Form):
    """Filters of the managers' ratings table; every field is optional."""

    domain = forms.ModelChoiceField(
        queryset=Domain.objects.order_by("name"), required=False, empty_label="All domains"
    )
    dimension = forms.ChoiceField(required=False)
    reviewer = _ReviewerChoiceField(
        queryset=User.objects.filter(role=User.Role.REVIEWER).order_by("username"),
        required=False,
        empty_label="All reviewers",
    )
    status = forms.ChoiceField(
        required=False, choices=[("", "All statuses"), *Rating.Status.choices]
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Dimension keys, not rows: the same key (e.g. specificity) may exist in several rubrics.
        seen: dict[str, str] = {}
        for key, name in Dimension.objects.order_by("position", "key").values_list("key", "name"):
            seen.setdefault(key, name)
        dimension = self.fields["dimension"]
        assert isinstance(dimension, forms.ChoiceField)
        dimension.choices = [("", "All dimensions"), *seen.items()]
