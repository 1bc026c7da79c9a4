"""The web process takes what it loaded at start out of the garbage collector's full scans
(apps/core/gc_freeze.py): checked in a fresh process, as the WSGI entry point starts one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What a fresh process has frozen: Django, the apps and their libraries are well above this.
LOADED = 50_000


def _run(code: str) -> list[str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_web_entry_point_loads_the_views_then_freezes_what_it_loaded():
    before, frozen, views_loaded = _run(
        "import gc; before = gc.get_freeze_count(); import sys, config.wsgi; "
        "print(before, gc.get_freeze_count(), 'apps.decisions.views' in sys.modules)"
    )
    assert int(before) == 0
    assert int(frozen) > LOADED
    assert views_loaded == "True"
