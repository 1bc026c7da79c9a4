from __future__ import annotations

from django import forms

from apps.catalog.models import Domain
from apps.panels.models import DOCUMENT_MAX_CHARS, Persona
from apps.panels.services.runs import MAX_IDEAS, MAX_ROUNDS

BUILDABLE = [
    (Persona.Source.REVIEWERS.value, Persona.Source.REVIEWERS.label),
    (Persona.Source.INVENTED.value, Persona.Source.INVENTED.label),
]


class DomainForm(forms.Form):
    domain = forms.ModelChoiceField(Domain.objects.all(), to_field_name="key", required=False)


class DocumentForm(forms.Form):
    domain = forms.ModelChoiceField(Domain.objects.all(), to_field_name="key")
    title = forms.CharField(max_length=200)
    file = forms.FileField(required=False, help_text="A plain-text or Markdown file (UTF-8).")
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), required=False)

    def clean(self) -> dict:
        data = super().clean() or {}
        upload = data.get("file")
        if upload is not None:
            if upload.size > DOCUMENT_MAX_CHARS * 4:
                raise forms.ValidationError({"file": f"at most {DOCUMENT_MAX_CHARS} characters"})
            try:
                data["text"] = upload.read().decode("utf-8")
            except UnicodeDecodeError as exc:
                raise forms.ValidationError({"file": "not a UTF-8 text file"}) from exc
        if not (data.get("text") or "").strip():
            raise forms.ValidationError({"text": "paste the document's text or choose a file"})
        return data


class BuildForm(forms.Form):
    domain = forms.ModelChoiceField(Domain.objects.all(), to_field_name="key")
    source = forms.ChoiceField(choices=BUILDABLE)
    count = forms.IntegerField(min_value=1, max_value=8, initial=3)


class RunForm(forms.Form):
    domain = forms.ModelChoiceField(Domain.objects.all(), to_field_name="key")
    personas = forms.ChoiceField(choices=Persona.Source.choices)
    dimension = forms.CharField(required=False, max_length=64, help_text="Empty: every dimension.")
    ideas = forms.IntegerField(min_value=1, max_value=MAX_IDEAS, initial=5)
    rounds = forms.IntegerField(min_value=1, max_value=MAX_ROUNDS, initial=2)
    budget_tokens = forms.IntegerField(
        min_value=1, required=False, help_text="Empty: the estimate's upper bound."
    )
    confirm = forms.BooleanField(required=False, widget=forms.HiddenInput)
