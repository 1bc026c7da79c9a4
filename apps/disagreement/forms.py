from __future__ import annotations

from typing import Any, cast

from django import forms

from apps.catalog.models import Domain
from apps.disagreement.models import Level

CATEGORY_CHOICES = [
    ("", "Left out, reported apart"),
    ("include", "Counted as the lowest grade"),
]


class DashboardFilterForm(forms.Form):
    """The filters shared by every dashboard page (GET). Invalid values fall back to "all"."""

    domain = forms.ChoiceField(required=False)
    dimension = forms.ChoiceField(required=False)
    background = forms.ChoiceField(required=False)
    level = forms.ChoiceField(required=False, choices=Level.choices)
    categories = forms.ChoiceField(
        required=False, choices=CATEGORY_CHOICES, label="Category levels"
    )
    since = forms.DateField(
        required=False, label="From", widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        required=False, label="To", widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(
        self, *args, dimension_labels: dict[str, str], backgrounds: list[str], **kwargs
    ) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["domain"]).choices = [("", "All domains")] + list(
            Domain.objects.order_by("name").values_list("key", "name")
        )
        dimension_choices = [("", "All dimensions")] + list(dimension_labels.items())
        cast(forms.ChoiceField, self.fields["dimension"]).choices = dimension_choices
        # Background is a free label: offer every group the reviewers have.
        cast(forms.ChoiceField, self.fields["background"]).choices = [("", "All reviewers")] + [
            (b, b[:1].upper() + b[1:]) for b in backgrounds
        ]

    def clean(self) -> dict[str, Any]:
        # Form.clean returns cleaned_data; the stubs allow None for overrides.
        data = cast(dict[str, Any], super().clean())
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            self.add_error("until", "The end date is before the start date.")
        return data

    def value(self, name: str):
        """The cleaned value, or the default when the field was invalid or absent."""
        self.is_valid()
        return self.cleaned_data.get(name) or None


class RecomputeForm(forms.Form):
    level = forms.ChoiceField(required=False, choices=Level.choices)
    since = forms.DateField(required=False)
    until = forms.DateField(required=False)
    categories = forms.ChoiceField(required=False, choices=CATEGORY_CHOICES)
