"""The change hooks (apps/core/hooks.py): the settings' lists are what runs, in order, after
commit; a path that does not import is refused by the system check."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import transaction

from apps.core.hooks import check_hooks
from apps.screening.services.ratings import rating_submit

CALLS: list[tuple[str, list[int]]] = []


def first(*, reviewer_ids):
    CALLS.append(("first", reviewer_ids))


def second(*, reviewer_ids):
    CALLS.append(("second", reviewer_ids))


HERE = "tests.core.test_hooks"
SCORES = {
    "specificity": 3,
    "technical_validity": 2,
    "innovativeness": 1,
    "competitive_advantage": 1,
    "need_validity": 0,
    "market_size": 1,
}


@pytest.fixture(autouse=True)
def _clear():
    CALLS.clear()


def test_the_shipped_hook_lists_all_import():
    assert check_hooks() == []


@pytest.mark.django_db(transaction=True)
def test_a_rating_runs_the_listed_hooks_in_order_after_its_commit(settings, reviewer, idea):
    settings.RATINGS_CHANGED_HOOKS = [f"{HERE}.second", f"{HERE}.first"]
    with transaction.atomic():
        rating_submit(reviewer=reviewer, idea=idea, scores=SCORES)
        assert CALLS == []  # nothing before the commit
    assert CALLS == [("second", [reviewer.id]), ("first", [reviewer.id])]


@pytest.mark.django_db(transaction=True)
def test_a_rating_rolled_back_runs_no_hook(settings, reviewer, idea):
    settings.RATINGS_CHANGED_HOOKS = [f"{HERE}.first"]
    with pytest.raises(RuntimeError), transaction.atomic():
        rating_submit(reviewer=reviewer, idea=idea, scores=SCORES)
        raise RuntimeError("rolled back")
    assert CALLS == []


def test_a_hook_path_that_does_not_import_fails_the_system_check(settings):
    settings.PREDICTIONS_CHANGED_HOOKS = [f"{HERE}.missing"]
    messages = check_hooks()
    assert [m.id for m in messages] == ["core.E001"]
    assert "PREDICTIONS_CHANGED_HOOKS" in messages[0].msg and "missing" in messages[0].msg
    with pytest.raises(SystemCheckError):
        call_command("check")
