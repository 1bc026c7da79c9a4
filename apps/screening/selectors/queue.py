"""Reads for a reviewer's own screening pages: the queue and one idea's rating context.

Everything here is scoped to one reviewer: blind review means these selectors never return
another reviewer's ratings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Max, Min, Q, QuerySet

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.screening.models import Assignment, Rating, RatingHistory


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
    _attach_dates(reviewer, queue.completed + queue.declined)
    queue.completed.sort(key=lambda a: a.updated_at, reverse=True)
    queue.declined.sort(key=lambda a: a.updated_at, reverse=True)
    return queue


def _attach_dates(reviewer: User, assignments: list[Assignment]) -> None:
    """Set ``rated_at`` (when the reviewer first rated the idea: the ratings' created_at, which
    an import sets from its file) and ``changed_at`` (the reviewer's last real change through the
    form or the API, None when there was none: an import or a re-import is not their change) on
    each assignment, in one query."""
    if not assignments:
        return
    rows = (
        Rating.objects.filter(reviewer=reviewer, idea_id__in=[a.idea_id for a in assignments])
        .values("idea_id")
        .annotate(
            made=Min("created_at"),
            changed=Max("history__changed_at", filter=~Q(history__source=Rating.Source.IMPORT)),
        )
        .order_by()
    )
    dates = {r["idea_id"]: (r["made"], r["changed"]) for r in rows}
    for a in assignments:
        made, changed = dates.get(a.idea_id, (None, None))
        a.rated_at = made  # type: ignore[attr-defined]
        a.changed_at = changed  # type: ignore[attr-defined]


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


def decline_rows(assignment: Assignment) -> list[RatingHistory]:
    """The history rows the reviewer's last decline wrote, one per dimension."""
    rows = list(
        RatingHistory.objects.filter(
            rating__reviewer_id=assignment.reviewer_id,
            rating__idea_id=assignment.idea_id,
            new_status=Rating.Status.DECLINED,
        ).order_by("-changed_at", "-id")
    )
    latest: dict[int, RatingHistory] = {}
    for row in rows:
        latest.setdefault(row.rating_id, row)
    return list(latest.values())


def decline_undo_blockers(declined: Sequence[Assignment]) -> dict[int, str]:
    """Why each declined assignment can no longer be taken back ("" when it can), in 3 queries.

    A decline can be undone while nobody has acted on it: no other reviewer has been assigned the
    idea since (the declined slot is what the assignment tool refills), and nothing has changed
    the reviewer's ratings of the idea since (an import, say).
    """
    reasons = {a.id: "This idea is not declined." for a in declined}
    declined = [a for a in declined if a.status == Assignment.Status.DECLINED]
    if not declined:
        return reasons
    reviewer_ids = {a.reviewer_id for a in declined}
    idea_ids = {a.idea_id for a in declined}
    history = RatingHistory.objects.filter(
        rating__reviewer_id__in=reviewer_ids, rating__idea_id__in=idea_ids
    )

    def latest(rows: QuerySet[RatingHistory]) -> dict[tuple[int, int], datetime]:
        grouped = rows.values("rating__reviewer_id", "rating__idea_id").annotate(
            at=Max("changed_at")
        )
        return {(g["rating__reviewer_id"], g["rating__idea_id"]): g["at"] for g in grouped}

    declined_at = latest(history.filter(new_status=Rating.Status.DECLINED))
    last_change = latest(history.exclude(new_status=Rating.Status.DECLINED))
    others: dict[int, list[tuple[int, datetime]]] = {}
    for pk, idea_id, created in Assignment.objects.filter(idea_id__in=idea_ids).values_list(
        "pk", "idea_id", "created_at"
    ):
        others.setdefault(idea_id, []).append((pk, created))
    for a in declined:
        at = declined_at.get((a.reviewer_id, a.idea_id), a.updated_at)
        if any(pk != a.pk and created > at for pk, created in others.get(a.idea_id, [])):
            reasons[a.id] = "Another reviewer has been assigned this idea since you declined it."
        elif (changed := last_change.get((a.reviewer_id, a.idea_id))) and changed > at:
            reasons[a.id] = "Your ratings of this idea have changed since you declined it."
        else:
            reasons[a.id] = ""
    return reasons


def decline_undo_blocker(assignment: Assignment) -> str:
    """Why this decline can no longer be taken back ("" when it can)."""
    return decline_undo_blockers([assignment])[assignment.id]
