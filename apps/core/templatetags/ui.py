"""Template filters every page shares (a builtin: no {% load %} needed; config/settings)."""

from __future__ import annotations

import datetime as dt

from django import template

from apps.core.display import when

register = template.Library()


@register.filter(name="when")
def when_filter(value: dt.datetime | dt.date | None) -> str:
    return when(value)
