"""The web process takes what it loaded at start out of the garbage collector's full scans
(apps/core/gc_freeze.py): checked in a fresh process, as the WSGI entry point starts one."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_a_paused_collector_is_restored_as_it_was_after_success_or_failure():
    from apps.core.gc_freeze import cycle_collection_paused

    assert gc.isenabled()
    with cycle_collection_paused():
        assert not gc.isenabled()
        with cycle_collection_paused():  # nested (another view's, another thread's): left off
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), cycle_collection_paused(collect_after=True):
        raise RuntimeError("a failed recompute")
    assert gc.isenabled()
    gc.disable()
    try:
        with cycle_collection_paused():
            pass
        assert not gc.isenabled(), "a collector that was off stays off"
    finally:
        gc.enable()


def test_collect_after_frees_the_cycles_made_while_paused():
    import weakref

    from apps.core.gc_freeze import cycle_collection_paused

    class Node:
        pass

    with cycle_collection_paused(collect_after=True):
        node = Node()
        node.me = node  # type: ignore[attr-defined]
        alive = weakref.ref(node)
        del node
        assert alive() is not None  # a cycle: reference counting cannot free it
    assert alive() is None


def test_a_board_view_runs_with_the_collector_paused():
    from apps.core.gc_freeze import without_cycle_collection

    seen = []

    @without_cycle_collection
    def view(request, value):
        seen.append((gc.isenabled(), value))
        return value

    assert view(None, value=3) == 3
    assert seen == [(False, 3)] and gc.isenabled()
    assert view.__name__ == "view"
