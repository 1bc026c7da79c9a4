"""Dates: filters count ratings by when they were made; the queue shows real changes only."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from apps.core.display import when
from apps.screening.models import Assignment, Rating, RatingHistory
from apps.screening.selectors.frame import rating_frame
from apps.screening.services.ratings import rating_submit

pytestmark = pytest.mark.django_db


def test_the_date_filter_counts_ratings_by_when_they_were_made_not_when_imported(planted):
    # An import made every rating "today" (updated_at), but they were made in October.
    october = dt.datetime(2026, 10, 10, 12, tzinfo=dt.UTC)
    Rating.objects.update(created_at=october, updated_at=timezone.now())
    n = Rating.objects.count()
    assert len(rating_frame(since=dt.date(2026, 10, 1), until=dt.date(2026, 11, 15))) == n
    assert len(rating_frame(since=timezone.now().date())) == 0
    # One rating made later moves out of the October window.
    late = Rating.objects.order_by("id").first()
    Rating.objects.filter(id=late.id).update(created_at=dt.datetime(2026, 11, 20, tzinfo=dt.UTC))
    assert len(rating_frame(until=dt.date(2026, 11, 15))) == n - 1


def test_the_queue_shows_when_a_rating_was_made_and_only_the_reviewers_own_changes(
    client, reviewer, idea
):
    assignment = Assignment.objects.get(reviewer=reviewer, idea=idea)
    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 1})
    made = dt.datetime(2026, 3, 4, 9, 30, tzinfo=dt.UTC)
    Rating.objects.filter(reviewer=reviewer).update(created_at=made)
    # As an import would have written it: its history rows are the import's, not hers.
    RatingHistory.objects.filter(rating__reviewer=reviewer).update(source=Rating.Source.IMPORT)
    client.force_login(reviewer)
    html = client.get("/screening/").content.decode()
    assert "4 Mar 2026" in html and "not changed since (imported)" in html
    assert assignment.idea.external_id in html
    # Her own edit through the form is a change, and shows as one.
    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 2})
    html = client.get("/screening/").content.decode()
    changed = Rating.objects.filter(reviewer=reviewer).latest("updated_at").updated_at
    assert "4 Mar 2026" in html and f"changed {when(changed).split(',')[0]}" in html
