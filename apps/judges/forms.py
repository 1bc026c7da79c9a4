from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django import forms

from apps.catalog.models import Domain
from apps.judges.models import JudgeConfig, JudgeRun
from apps.judges.services.configs import (
    BOUNDS,
    CONFIG_FIELDS,
    config_run_error,
    judge_config_errors,
)
from apps.screening.models import Dimension


def _dimension_choices() -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for d in Dimension.objects.order_by("-rubric__is_default", "position"):
        seen.setdefault(d.key, d.name)
    return list(seen.items())


class StudyForm(forms.Form):
    """An admin's hand-started study (SPEC "Judges": k in {0, 1, 2, 5, 9}, three seeds)."""

    domain = forms.ModelChoiceField(
        queryset=Domain.objects.order_by("name"), empty_label="Choose a domain…"
    )
    dimensions = forms.MultipleChoiceField(choices=(), widget=forms.CheckboxSelectMultiple)
    configs = forms.ModelMultipleChoiceField(
        queryset=JudgeConfig.objects.filter(is_active=True).order_by("kind", "name"),
        widget=forms.CheckboxSelectMultiple,
        label="Configurations",
    )
    shots = forms.CharField(
        initial="0,1,2,5,9", label="k values", help_text="Comma-separated, e.g. 0,1,2,5,9"
    )
    seeds = forms.IntegerField(initial=3, min_value=1, max_value=10)
    backend = forms.ChoiceField(
        choices=[("", "Each configuration's own")] + list(JudgeConfig.Backend.choices),
        required=False,
    )
    min_history = forms.IntegerField(
        initial=2,
        min_value=1,
        max_value=1000,
        label="Minimum ratings per reviewer",
        help_text="Reviewers with fewer scored ratings in the dimension are left out.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["dimensions"]).choices = _dimension_choices()

    def clean_shots(self) -> list[int]:
        raw = self.cleaned_data["shots"]
        try:
            values = sorted({int(x) for x in raw.replace(" ", "").split(",") if x != ""})
        except ValueError as exc:
            raise forms.ValidationError(
                f"k values must be whole numbers separated by commas (got {raw!r})."
            ) from exc
        if not values or any(k < 0 or k > 50 for k in values):
            raise forms.ValidationError("Give one or more k values between 0 and 50.")
        return values


class JudgeConfigForm(forms.ModelForm):
    """The admin's configuration form: the one validator (services.configs) decides, and its
    errors are shown on the fields they name."""

    class Meta:
        model = JudgeConfig
        fields = CONFIG_FIELDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Bounds are the validator's (one home); the model fields' own range checks would
        # answer first with another wording.
        for name in BOUNDS:
            self.fields[name].validators = []

    def clean(self) -> dict:
        cleaned = super().clean() or {}
        values = {f: cleaned[f] for f in CONFIG_FIELDS if f in cleaned}
        checked, errors = judge_config_errors(values)
        if not errors and "backend" in values:
            cannot_run = config_run_error(
                backend=values["backend"], base_url=values.get("base_url") or ""
            )
            errors = [cannot_run] if cannot_run is not None else []
        for error in errors:
            field = error.field if error.field in self.fields else None
            message = f"{error.message} (got {error.value!r})" if error.value else error.message
            if field is None or field not in self.errors:
                self.add_error(field, message)
        if not errors:
            cleaned.update(checked)
        return cleaned


class RunFilterForm(forms.Form):
    """The runs list's filters (GET): where runs come from, and their status."""

    origin = forms.ChoiceField(
        label="Started",
        required=False,
        choices=[("", "any way"), ("automatic", "automatically"), ("studies", "as studies")],
    )
    status = forms.ChoiceField(
        label="Status",
        required=False,
        choices=[("", "any status"), *JudgeRun.Status.choices],
    )


class PredictionFilterForm(forms.Form):
    reviewer = forms.ChoiceField(required=False)
    domain = forms.ModelChoiceField(
        queryset=Domain.objects.order_by("name"),
        required=False,
        to_field_name="key",
        empty_label="All domains",
    )
    dimension = forms.ChoiceField(required=False)

    def __init__(
        self, *args: Any, reviewers: Sequence[tuple[str, str]] = (), **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        reviewer_choices = [("", "All reviewers")] + list(reviewers)
        cast(forms.ChoiceField, self.fields["reviewer"]).choices = reviewer_choices
        dimension_choices = [("", "All dimensions")] + _dimension_choices()
        cast(forms.ChoiceField, self.fields["dimension"]).choices = dimension_choices


class AlignmentFilterForm(forms.Form):
    """The dashboard's filters. Invalid values (a NUL byte, an unknown domain, a malformed source)
    fall back to "all domains" / "auto" instead of reaching the database."""

    domain = forms.SlugField(required=False, max_length=64)
    source = forms.RegexField(regex=r"^(auto|run-\d{1,10})$", required=False)

    def choice(self) -> tuple[Domain | None, str]:
        if not self.is_valid():
            return None, "auto"
        key = self.cleaned_data.get("domain") or None
        domain = Domain.objects.filter(key=key).first() if key else None
        return domain, self.cleaned_data.get("source") or "auto"
