"""What runs after ratings or predictions change: explicit lists in settings, like MIDDLEWARE.

The apps that read ratings sit above the app that stores them (screening), and the decision
board sits above the judges whose predictions it weighs: the lower app cannot import the higher
ones. Instead of signals (which hide who listens) or function-level imports (which hide the
cycle), the lists ``RATINGS_CHANGED_HOOKS`` and ``PREDICTIONS_CHANGED_HOOKS`` in
config/settings/base.py name every function that runs, in order, after the change commits.

A hook takes the keyword ``reviewer_ids`` (whose ratings, or whose judge's predictions,
changed), computes nothing itself and must not raise for a dead broker (it records the failure
and returns): the change is already saved. ``check_hooks`` (a system check) refuses a path that
does not import.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core import checks
from django.db import transaction
from django.utils.module_loading import import_string

HOOK_SETTINGS = ("RATINGS_CHANGED_HOOKS", "PREDICTIONS_CHANGED_HOOKS")
# Lists of dotted paths checked the same way (apps/disagreement/views/pages.py::idea_sections).
CHECKED_SETTINGS = (*HOOK_SETTINGS, "IDEA_PAGE_SECTIONS")


def hooks(setting: str) -> list[Callable[..., Any]]:
    """The functions a hook setting names, in order."""
    return [import_string(path) for path in getattr(settings, setting)]


def run_after_commit(setting: str, *, reviewer_ids: Iterable[int]) -> None:
    """Run every hook of ``setting`` after the caller's transaction commits (at once when
    there is none), each with the reviewers whose data changed."""
    ids = sorted(set(reviewer_ids))
    for hook in hooks(setting):
        transaction.on_commit(functools.partial(hook, reviewer_ids=ids))


@checks.register()
def check_hooks(**_: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    for setting in CHECKED_SETTINGS:
        for path in getattr(settings, setting, []):
            try:
                hook = import_string(path)
            except ImportError as exc:
                errors.append(
                    checks.Error(f"{setting}: {path} does not import ({exc}).", id="core.E001")
                )
                continue
            if not callable(hook):
                errors.append(checks.Error(f"{setting}: {path} is not callable.", id="core.E002"))
    return errors
