"""Filters of the managers' ratings table."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.screening.models import Dimension, Rating


class _ReviewerChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: User) -> str:
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
