from __future__ import annotations

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.core.errors import NotFound
from apps.screening.models import Assignment, Dimension, Rating, Rubric


def rubric_default() -> Rubric:
    rubric = Rubric.objects.filter(is_default=True).first()
    if rubric is None:
        raise NotFound("No default rubric is configured; import one with import_rubric --default.")
    return rubric


def rubric_for_idea(idea: Idea) -> Rubric:
    domain = idea.patent.domain
    # No query when rubric_id is empty: the descriptor answers None.
    return domain.rubric if domain.rubric is not None else rubric_default()


def dimensions_for_idea(idea: Idea) -> list[Dimension]:
    return list(rubric_for_idea(idea).dimensions.order_by("position"))


def ratings_of(*, reviewer: User, idea: Idea) -> dict[str, Rating]:
    """A reviewer's own ratings of one idea, by dimension key."""
    rows = Rating.objects.filter(reviewer=reviewer, idea=idea).select_related("dimension")
    return {r.dimension.key: r for r in rows}


def assignment_for(*, reviewer: User, idea: Idea) -> Assignment | None:
    return Assignment.objects.filter(reviewer=reviewer, idea=idea).first()
