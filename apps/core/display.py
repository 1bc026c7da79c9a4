"""How pages show values that need one shared format (used by the `|when` template filter and
by presenters that build labels in Python)."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.utils import dateformat, timezone


def when(value: dt.datetime | dt.date | None) -> str:
    """The one way a page shows a date and time (settings.UI_DATETIME_FORMAT, in the server's
    time zone): "23 Nov 2026, 21:40". Pages used four formats ("3 minutes ago", "Today",
    with and without seconds); one format reads the same everywhere."""
    if value is None or value == "":
        return ""
    if isinstance(value, dt.datetime):
        if timezone.is_aware(value):
            value = timezone.localtime(value)
        return dateformat.format(value, settings.UI_DATETIME_FORMAT)
    return dateformat.format(value, settings.UI_DATE_FORMAT)
