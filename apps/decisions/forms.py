from __future__ import annotations

from django import forms

from apps.decisions.presenters import DEFAULT_SORT, EVIDENCE, SORTS


class DecideForm(forms.Form):
    """The Decide page's controls (GET). Invalid values fall back to the defaults."""

    domain = forms.CharField(required=False, max_length=64)
    dimension = forms.CharField(required=False, max_length=64)
    sort = forms.ChoiceField(required=False, choices=[(k, k) for k in SORTS])
    q = forms.CharField(required=False, max_length=200, label="Search")
    page = forms.IntegerField(required=False, min_value=1, max_value=100_000)
    # "people": the board fitted on people's reads only (no predictions, no text model).
    evidence = forms.ChoiceField(required=False, choices=EVIDENCE)

    def value(self, name: str, default=None):
        self.is_valid()
        return self.cleaned_data.get(name) or default

    @property
    def order(self) -> str:
        return self.value("sort", DEFAULT_SORT)


class AcceptForm(forms.Form):
    suggestions = forms.TypedMultipleChoiceField(coerce=int, required=True)

    def __init__(self, *args, choices: list[tuple[str, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["suggestions"].choices = choices  # type: ignore[attr-defined]


class DomainRoutingForm(forms.Form):
    domain = forms.CharField(max_length=64)
    automatic = forms.TypedChoiceField(
        choices=[("on", "on"), ("off", "off")], coerce=lambda v: v == "on"
    )
