"""Two submissions of the same idea by the same reviewer at the same moment."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client

from apps.screening.models import Rating, RatingHistory
from tests.factories import AssignmentFactory, IdeaFactory, ReviewerFactory
from tests.screening.conftest import FULL_FORM, post_form


@pytest.mark.django_db(transaction=True)
def test_a_double_submission_ends_with_one_rating_per_dimension_and_no_error(pbig_rubric, domain):
    reviewer = ReviewerFactory(username="rita", profile=[domain])
    idea = IdeaFactory(patent__domain=domain)
    AssignmentFactory(reviewer=reviewer, idea=idea)
    barrier = threading.Barrier(2)
    statuses: list[int] = []
    failures: list[BaseException] = []

    def submit() -> None:
        try:
            client = Client()
            client.force_login(reviewer)
            barrier.wait(timeout=10)
            statuses.append(post_form(client, idea, FULL_FORM).status_code)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert failures == []
    assert statuses == [302, 302]
    assert Rating.objects.filter(reviewer=reviewer, idea=idea).count() == 6
    # The second submission found the first one's rows and changed nothing.
    assert RatingHistory.objects.filter(rating__reviewer=reviewer).count() == 6
