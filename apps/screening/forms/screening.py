"""The staged screening form of the rate page.

Built from the Dimension rows of the idea's rubric, so any rubric works (other dimensions,
scales, gates, or no gates at all). Which stages are open is decided on the server from the
values posted so far, with the same gate functions the service enforces. Reading the posted
values, deciding which stages are open and the warnings before a save work on the same merged
values (``given``/``merged_scores``) in this class; the shapes the template gets for each stage
are built from it in forms/stages.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from django import forms

from apps.core.errors import FieldError
from apps.screening.consistency import category_conflicts
from apps.screening.forms.display import (
    Given,
    StageView,
)
from apps.screening.forms.names import (
    CONFIRM_NAME,
    YES_NO,
    answer_name,
    rationale_name,
    score_name,
    skip_name,
    yes_no,
)
from apps.screening.forms.stages import form_order, stage_views
from apps.screening.gates import open_dimensions
from apps.screening.models import Dimension, Rating
from apps.screening.services.ratings import resolve_scores


def _show_score(dim: Dimension, score: int | None) -> str:
    return f"{dim.name} {score}" if score is not None else dim.name


class ScreeningForm(forms.Form):
    """One reviewer's scores, yes/no answers and rationales for one idea.

    Values of closed stages are kept (rendered as hidden inputs) so that re-opening a stage
    restores them; only the open dimensions are ever sent to rating_submit.
    """

    def __init__(
        self,
        *args: Any,
        dimensions: Sequence[Dimension],
        saved: Mapping[str, Rating] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.dimensions = list(dimensions)
        self.by_key = {d.key: d for d in self.dimensions}
        # The reviewer's current ratings: what a save would overwrite.
        self.saved: Mapping[str, Rating] = saved or {}
        # Errors the service reported, by dimension key ("" for the whole submission).
        self.dimension_errors: dict[str, list[str]] = {}
        for dim in self.dimensions:
            if dim.questions:
                for q in dim.questions:
                    self.fields[answer_name(dim, q["key"])] = forms.TypedChoiceField(
                        choices=YES_NO,
                        coerce=yes_no,
                        required=False,
                        empty_value=None,
                        label=q["text"],
                        error_messages={"invalid_choice": "must be answered yes or no"},
                    )
            else:
                # The scale is checked here, so an off-scale value gets one message and never
                # reaches the service (which would report it a second time).
                on_scale = f"must be between {dim.scale_min} and {dim.scale_max}"
                self.fields[score_name(dim)] = forms.IntegerField(
                    required=False,
                    label=dim.name,
                    min_value=dim.scale_min,
                    max_value=dim.scale_max,
                    error_messages={
                        "invalid": "must be a whole number",
                        "min_value": on_scale,
                        "max_value": on_scale,
                    },
                )
            self.fields[rationale_name(dim)] = forms.CharField(
                required=False, max_length=4000, label=f"{dim.name} rationale"
            )
            if dim.optional:
                self.fields[skip_name(dim)] = forms.BooleanField(
                    required=False, label=f"Skip {dim.name}"
                )
        self.fields[CONFIRM_NAME] = forms.CharField(required=False, max_length=64)

    @staticmethod
    def initial_from(
        dimensions: Sequence[Dimension], ratings: Mapping[str, Rating]
    ) -> dict[str, Any]:
        """Pre-fill from the reviewer's current ratings; gated and declined ones start empty."""
        initial: dict[str, Any] = {}
        for dim in dimensions:
            rating = ratings.get(dim.key)
            if rating is None:
                continue
            if rating.status == Rating.Status.NOT_ANSWERED and dim.optional:
                initial[skip_name(dim)] = True
                continue
            if rating.status != Rating.Status.SCORED:
                continue
            if dim.questions:
                # A scored rating always has a score.
                score = cast(int, rating.score)
                saved = rating.answers or dim.rule().answers_for_score(score) or {}
                for q in dim.questions:
                    answer = saved.get(q["key"])
                    if answer is not None:
                        initial[answer_name(dim, q["key"])] = bool(answer)
            else:
                initial[score_name(dim)] = rating.score
            initial[rationale_name(dim)] = rating.rationale
        return initial

    # Values -----------------------------------------------------------------------------------

    def posted_value(self, name: str) -> Any:
        """The cleaned value when bound (invalid fields count as empty), else the initial one."""
        if self.is_bound:
            self.is_valid()
            return self.cleaned_data.get(name)
        return self.initial.get(name)

    def given(self) -> Given:
        """Every value the reviewer has given, in open and closed stages alike."""
        given = Given()
        for dim in self.dimensions:
            if dim.optional and self.posted_value(skip_name(dim)):
                given.skipped.add(dim.key)
            elif dim.questions:
                answers = {
                    q["key"]: self.posted_value(answer_name(dim, q["key"])) for q in dim.questions
                }
                answers = {k: v for k, v in answers.items() if v is not None}
                if answers:
                    given.answers[dim.key] = answers
            else:
                score = self.posted_value(score_name(dim))
                if score is not None:
                    given.scores[dim.key] = score
            text = (self.posted_value(rationale_name(dim)) or "").strip()
            if text:
                given.rationales[dim.key] = text
        return given

    def merged_scores(self) -> dict[str, int | None]:
        """Scores with question-based ones derived from the answers (when all are given)."""
        given = self.given()
        merged, _errors = resolve_scores(self.dimensions, given.scores, given.answers)
        return merged

    def open_keys(self) -> list[str]:
        return open_dimensions([d.rule() for d in self.dimensions], self.merged_scores())

    def payload(self) -> tuple[dict[str, int | None], dict[str, dict[str, bool]], dict[str, str]]:
        """(scores, answers, rationales) of the open dimensions, in the shape rating_submit takes.

        Values kept for closed stages are left out: a save stores those as not rated by design.
        A skipped optional dimension is left out too, which rating_submit stores as not answered.
        """
        given = self.given()
        is_open = set(self.open_keys())
        scores = {k: v for k, v in given.scores.items() if k in is_open}
        answers = {k: v for k, v in given.answers.items() if k in is_open}
        rationales = {
            k: v for k, v in given.rationales.items() if k in is_open and k not in given.skipped
        }
        return scores, answers, rationales

    def missing(self) -> list[Dimension]:
        """Open dimensions still to fill in: unscored, unless optional and skipped."""
        merged = self.merged_scores()
        skipped = self.given().skipped
        return [
            self.by_key[k] for k in self.open_keys() if merged.get(k) is None and k not in skipped
        ]

    def is_complete(self) -> bool:
        return not self.missing()

    # Warnings that need a confirmation before saving -----------------------------------------

    def closing_losses(self) -> list[Dimension]:
        """Closed dimensions that hold a saved score or a typed one: a save drops them."""
        given = self.given()
        is_open = set(self.open_keys())
        lost: list[Dimension] = []
        # In form order, so the warning names them as the reviewer sees them, top to bottom.
        for dim in self.form_order():
            if dim.key in is_open:
                continue
            rating = self.saved.get(dim.key)
            was_scored = rating is not None and rating.status == Rating.Status.SCORED
            typed = dim.key in given.scores or dim.key in given.answers
            if was_scored or typed:
                lost.append(dim)
        return lost

    def conflicts(self) -> list[str]:
        is_open = set(self.open_keys())
        merged = self.merged_scores()
        return category_conflicts(
            [d for d in self.dimensions if d.key in is_open],
            {k: v for k, v in merged.items() if k in is_open},
        )

    def closing_warning(self) -> str:
        lost = self.closing_losses()
        if not lost:
            return ""
        names = ", ".join(d.name for d in lost)
        saved = [
            d
            for d in lost
            if d.key in self.saved and self.saved[d.key].status == Rating.Status.SCORED
        ]
        history = " Your earlier scores stay in your edit history." if saved else ""
        return (
            f"Saving now stores {names} as not rated by design, because a gate above "
            f"{'them' if len(lost) > 1 else 'it'} is closed.{history}"
        )

    def warnings(self) -> list[str]:
        """What a save would do that the reviewer may not expect; none while values are invalid."""
        if self.is_bound and not self.is_valid():
            return []
        closing = self.closing_warning()
        return ([closing] if closing else []) + self.conflicts()

    def warnings_signature(self) -> str:
        """A short fingerprint of the current warnings: a confirmation covers exactly these."""
        import hashlib

        text = "\n".join(self.warnings())
        return hashlib.sha256(text.encode()).hexdigest()[:16] if text else ""

    def needs_confirmation(self) -> bool:
        signature = self.warnings_signature()
        return bool(signature) and self.posted_value(CONFIRM_NAME) != signature

    # Keyboard legend ----------------------------------------------------------------------------

    @property
    def digit_scales(self) -> list[dict[str, Any]]:
        """The scales the digit keys score on, each with the dimensions that use it (in form
        order) and its category levels: the legend says 1-4 where the scales are 1-4."""
        scored = [d for d in self.dimensions if not d.questions] or self.dimensions
        groups: dict[tuple[int, int], dict[str, Any]] = {}
        for d in scored:
            g = groups.setdefault(
                (d.scale_min, d.scale_max),
                {"low": d.scale_min, "high": min(9, d.scale_max), "names": [], "categories": []},
            )
            g["names"].append(d.name)
            for c in d.categories:
                if int(c) not in g["categories"]:
                    g["categories"].append(int(c))
        return list(groups.values())

    @property
    def has_questions(self) -> bool:
        return any(d.questions for d in self.dimensions)

    @property
    def has_optional(self) -> bool:
        return any(d.optional for d in self.dimensions)

    # Errors -----------------------------------------------------------------------------------

    def add_service_errors(self, errors: Sequence[FieldError]) -> None:
        for error in errors:
            key = error.field if error.field in self.by_key else ""
            self.dimension_errors.setdefault(key, []).append(error.message)

    def all_errors(self) -> list[tuple[str, str, str]]:
        """(label, message, anchor) for the summary box: each problem is said once.

        A problem of one dimension is written next to that dimension, so the summary only names
        the dimension and links to it; problems of the whole submission are written out here.
        """
        out: list[tuple[str, str, str]] = []
        for dim in self.dimensions:
            count = len(self.field_errors(dim))
            if count:
                problems = "1 problem" if count == 1 else f"{count} problems"
                out.append((dim.name, problems, f"dim-{dim.key}"))
        for message in self.dimension_errors.get("", []):
            out.append(("", message, ""))
        return out

    def field_errors(self, dim: Dimension) -> list[str]:
        messages = list(self.dimension_errors.get(dim.key, []))
        if self.is_bound:
            self.is_valid()
            names = [score_name(dim), rationale_name(dim), skip_name(dim)] + [
                answer_name(dim, q["key"]) for q in dim.questions
            ]
            for name in names:
                messages += [str(m) for m in self.errors.get(name, [])]
        return list(dict.fromkeys(messages))

    # Presentation (forms/stages.py) -----------------------------------------------------------

    def stages(self) -> list[StageView]:
        """The rubric as ordered stages; open ones carry their fields, closed ones their reason."""
        return stage_views(self)

    def form_order(self) -> list[Dimension]:
        """Every dimension in the order the form shows it (stage by stage)."""
        return form_order(self.dimensions)
