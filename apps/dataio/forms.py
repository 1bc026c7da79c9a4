from typing import Any

from django import forms

from apps.dataio.services.imports import IMPORT_KINDS

ACCEPT = {
    "rubric": ".yaml,.yml,.json",
    "patents": ".csv,.jsonl,.ndjson",
    "ideas": ".csv,.jsonl,.ndjson",
    "reviewers": ".csv,.jsonl,.ndjson",
    "ratings": ".csv,.jsonl,.ndjson",
}


class ImportForm(forms.Form):
    file = forms.FileField(label="File")
    dry_run = forms.BooleanField(label="Dry run (check only, save nothing)", required=False)
    make_default = forms.BooleanField(label="Make it the default rubric", required=False)
    create_domains = forms.BooleanField(
        label="Create new domains named in the file (otherwise an unknown domain is refused "
        "once ratings exist)",
        required=False,
    )

    def __init__(self, *args: Any, kind: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind = kind
        self.fields["file"].widget.attrs["accept"] = ACCEPT[kind]
        if kind != "rubric":
            del self.fields["make_default"]
        if kind not in ("patents", "rubric"):
            del self.fields["create_domains"]


class AdminImportForm(ImportForm):
    """The Django-admin variant: the kind is chosen in the form."""

    kind_choice = forms.ChoiceField(label="Kind", choices=[(k, k.title()) for k in IMPORT_KINDS])
    make_default = forms.BooleanField(
        label="Make it the default rubric (rubric files only)", required=False
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, kind="rubric", **kwargs)
        self.fields["file"].widget.attrs.pop("accept", None)
        self.order_fields(["kind_choice", "file", "dry_run", "make_default"])
