"""One date format on every page (issue 21.10): the `|when` filter, nothing else."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from django.conf import settings
from django.template import Context, Template


def test_when_writes_one_format_in_the_servers_time_zone():
    stamp = dt.datetime(2026, 11, 23, 21, 40, 59, tzinfo=dt.UTC)
    assert Template("{{ t|when }}").render(Context({"t": stamp})) == "23 Nov 2026, 21:40"
    assert Template("{{ t|when }}").render(Context({"t": None})) == ""


def test_no_template_formats_a_date_another_way():
    # Y-m-d stays allowed: it is the value of date inputs, not text for people.
    other = re.compile(r"\|(date(?!:['\"]Y-m-d)|naturaltime|naturalday|timesince|timeuntil)\b")
    root = Path(settings.BASE_DIR) / "templates"
    offenders = [
        str(p.relative_to(root)) for p in root.rglob("*.html") if other.search(p.read_text())
    ]
    assert offenders == []
