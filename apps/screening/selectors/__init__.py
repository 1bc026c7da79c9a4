from __future__ import annotations

from dataclasses import dataclass

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


def dimensions_of(rubric: Rubric) -> list[Dimension]:
    return list(rubric.dimensions.order_by("position"))


def dimensions_for_idea(idea: Idea) -> list[Dimension]:
    return dimensions_of(rubric_for_idea(idea))


@dataclass(frozen=True)
class Screening:
    """A reviewer's screening of one idea as stored: the assignment, the idea's rubric with its
    dimensions in order, and the ratings in that order (each with its reviewer, idea and
    dimension set, so reading them costs no further query)."""

    assignment: Assignment
    rubric: Rubric
    dimensions: list[Dimension]
    ratings: list[Rating]


def screening_of(
    *,
    reviewer: User,
    idea: Idea,
    assignment: Assignment,
    rubric: Rubric | None = None,
    dimensions: list[Dimension] | None = None,
) -> Screening:
    """The reviewer's stored screening of `idea`; pass the rubric and its dimensions when the
    caller has them already."""
    rubric = rubric if rubric is not None else rubric_for_idea(idea)
    dimensions = dimensions if dimensions is not None else dimensions_of(rubric)
    by_dimension = {r.dimension_id: r for r in Rating.objects.filter(reviewer=reviewer, idea=idea)}
    ratings = []
    for dim in dimensions:
        rating = by_dimension.get(dim.id)
        if rating is not None:
            rating.reviewer, rating.idea, rating.dimension = reviewer, idea, dim
            ratings.append(rating)
    return Screening(assignment=assignment, rubric=rubric, dimensions=dimensions, ratings=ratings)


def ratings_of(*, reviewer: User, idea: Idea) -> dict[str, Rating]:
    """A reviewer's own ratings of one idea, by dimension key."""
    rows = Rating.objects.filter(reviewer=reviewer, idea=idea).select_related("dimension")
    return {r.dimension.key: r for r in rows}


def assignment_for(*, reviewer: User, idea: Idea) -> Assignment | None:
    return Assignment.objects.filter(reviewer=reviewer, idea=idea).first()
