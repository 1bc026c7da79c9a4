"""The form a reviewer confirms to decline an idea from their queue."""

from __future__ import annotations

from django import forms


class DeclineForm(forms.Form):
    reason = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why (optional)",
    )
    confirm = forms.BooleanField(
        required=True,
        label=(
            "Yes, remove this idea from my queue. I can take this back only until someone acts "
            "on it (an admin assigns another reviewer)."
        ),
        error_messages={"required": "tick this box to confirm that you want to decline"},
    )
