from __future__ import annotations

from django import forms

from apps.decisions.models import DecisionMark
from apps.decisions.record.services import NOTE_MAX, SIZE_MAX


class ShortlistSizeForm(forms.Form):
    domain = forms.RegexField(regex=r"^[-a-zA-Z0-9_]{1,64}$", max_length=64)
    n = forms.IntegerField(min_value=1, max_value=SIZE_MAX, label="Shortlist size N")
    next = forms.CharField(required=False, max_length=2000)


class MarkForm(forms.Form):
    mark = forms.ChoiceField(choices=DecisionMark.Mark.choices)
    note = forms.CharField(required=False, max_length=NOTE_MAX, widget=forms.Textarea)
    page = forms.IntegerField(required=False, min_value=1, max_value=100_000)


class MarksPageForm(forms.Form):
    """The decision page's controls (GET); invalid values fall back to the defaults."""

    domain = forms.CharField(required=False, max_length=64)
    page = forms.IntegerField(required=False, min_value=1, max_value=100_000)
    show = forms.ChoiceField(
        required=False, choices=[("all", "all"), ("marked", "marked"), ("shortlist", "shortlist")]
    )

    def value(self, name: str, default=None):
        self.is_valid()
        return self.cleaned_data.get(name) or default


class MemoForm(forms.Form):
    domain = forms.CharField(required=False, max_length=64)
    format = forms.ChoiceField(required=False, choices=[("html", "HTML"), ("md", "Markdown")])


class CutForm(forms.Form):
    """Decide's and decide.csv's ``n``: the shortlist size to cut at (default: the domain's N)."""

    n = forms.IntegerField(required=False, min_value=1, max_value=SIZE_MAX)

    def value(self) -> int | None:
        return self.cleaned_data.get("n") if self.is_valid() else None
