"""Reads for a reviewer's own screening pages: the queue and one idea's rating context.

Everything here is scoped to one reviewer: blind review means these selectors never return
another reviewer's ratings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.screening.models import Assignment, RatingHistory


@dataclass
class ReviewerQueue:
    pending: list[Assignment] = field(default_factory=list)
    completed: list[Assignment] = field(default_factory=list)
    declined: list[Assignment] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.pending) + len(self.completed) + len(self.declined)

    @property
    def done(self) -> int:
        """Declining an idea also finishes it: it leaves the reviewer's to-do list."""
        return len(self.completed) + len(self.declined)

    @property
    def remaining(self) -> int:
        return len(self.pending)

    @property
    def percent_done(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def idea_queue_for(*, reviewer: User) -> ReviewerQueue:
    """The reviewer's assignments split by status, in one query.

    Pending ideas come in the order they were assigned (oldest first); finished ones show the
    most recently touched first, since that is what a reviewer goes back to edit.
    """
    rows = (
        Assignment.objects.filter(reviewer=reviewer)
        .select_related("idea__patent__domain")
        .order_by("created_at", "id")
    )
    queue = ReviewerQueue()
    for assignment in rows:
        if assignment.status == Assignment.Status.PENDING:
            queue.pending.append(assignment)
        elif assignment.status == Assignment.Status.COMPLETED:
            queue.completed.append(assignment)
        else:
            queue.declined.append(assignment)
    queue.completed.sort(key=lambda a: a.updated_at, reverse=True)
    queue.declined.sort(key=lambda a: a.updated_at, reverse=True)
    return queue


def next_pending_idea_for(*, reviewer: User, after: Idea | None = None) -> Idea | None:
    """The next idea the reviewer still has to rate (skipping `after`), oldest assignment first."""
    rows = Assignment.objects.filter(reviewer=reviewer, status=Assignment.Status.PENDING)
    if after is not None:
        rows = rows.exclude(idea=after)
    first = rows.select_related("idea").order_by("created_at", "id").first()
    return first.idea if first else None


def rating_history_of(*, reviewer: User, idea: Idea) -> list[RatingHistory]:
    """Every change to the reviewer's own ratings of one idea, newest first."""
    return list(
        RatingHistory.objects.filter(rating__reviewer=reviewer, rating__idea=idea)
        .select_related("rating__dimension", "changed_by")
        .order_by("-changed_at", "-id")
    )
