"""Writes to ratings and assignments. Every change to a rating leaves a RatingHistory row."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
from django.db import transaction

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.core import hooks
from apps.core.errors import ApplicationError, FieldError, PermissionDenied
from apps.screening.gates import screening_statuses, validate_scores
from apps.screening.models import Assignment, Dimension, Rating
from apps.screening.selectors import (
    Screening,
    dimensions_for_idea,
    dimensions_of,
    rubric_for_idea,
    screening_of,
)
from apps.screening.selectors.queue import decline_rows, decline_undo_blocker
from apps.screening.services.rating_store import COLUMNS, ratings_store

GATED = Rating.Status.NOT_RATED_BY_DESIGN.value


def ratings_changed(*, reviewer_ids: Iterable[int]) -> None:
    """Tell the apps that read ratings, after commit, that these reviewers' ratings changed: the
    hooks RATINGS_CHANGED_HOOKS names (settings; apps/core/hooks.py), in order."""
    ids = sorted(set(reviewer_ids))
    if ids:
        hooks.run_after_commit("RATINGS_CHANGED_HOOKS", reviewer_ids=ids)


def _lock_assignment(*, reviewer: User, idea: Idea) -> Assignment:
    """Lock the reviewer's assignment row; concurrent submissions of one idea queue up behind it."""
    if not reviewer.is_reviewer:
        raise PermissionDenied("Only reviewers rate ideas.")
    assignment = Assignment.objects.select_for_update().filter(reviewer=reviewer, idea=idea).first()
    if assignment is None:
        raise PermissionDenied("This idea is not assigned to you.")
    return assignment


def _store_screening(
    *,
    reviewer: User,
    idea: Idea,
    states: Sequence[tuple[Dimension, str, int | None, Mapping[str, Any] | None, str]],
    source: str,
) -> bool:
    """Store one screening (dimension, status, score, answers, rationale) through the one storage
    path, which owns the history rules; returns whether anything changed."""
    rows = pd.DataFrame(
        [
            {
                "reviewer_id": reviewer.pk,
                "idea_id": idea.pk,
                "dimension_id": dim.pk,
                "status": status,
                "score": score,
                "answers": dict(answers) if answers else None,
                "rationale": rationale,
                "created_at": None,
                "updated_at": None,
            }
            for dim, status, score, answers, rationale in states
        ],
        columns=COLUMNS,
    )
    result = ratings_store(rows=rows, source=source, changed_by_id=reviewer.pk)
    return bool(result.created or result.updated)


def resolve_scores(
    dimensions: list[Dimension],
    scores: Mapping[str, int | None],
    answers: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[str, int | None], list[FieldError]]:
    """Merge explicit scores with scores derived from yes/no answers; report contradictions."""
    merged: dict[str, int | None] = {k: v for k, v in scores.items()}
    errors: list[FieldError] = []
    for dim in dimensions:
        if not dim.questions or dim.key not in answers:
            continue
        given = answers[dim.key]
        missing = [q["key"] for q in dim.questions if given.get(q["key"]) is None]
        if missing and len(missing) < len(dim.questions):
            message = f"needs an answer to every question (missing: {', '.join(missing)})"
            errors.append(FieldError(field=dim.key, message=message))
            continue
        if missing:
            continue
        derived = dim.rule().score_from_answers({k: bool(v) for k, v in given.items()})
        explicit = merged.get(dim.key)
        if explicit is not None and explicit != derived:
            message = f"gets {derived} from the answers, not the score sent"
            errors.append(FieldError(field=dim.key, message=message, value=str(explicit)))
        merged[dim.key] = derived
    return merged, errors


@transaction.atomic
def rating_submit(
    *,
    reviewer: User,
    idea: Idea,
    scores: Mapping[str, int | None],
    answers: Mapping[str, Mapping[str, Any]] | None = None,
    rationales: Mapping[str, str] | None = None,
    source: str = Rating.Source.FORM,
) -> Screening:
    """Record a reviewer's complete screening of one idea, enforcing the rubric's gates, and
    return it as stored.

    Open dimensions must be scored, except optional ones, which may be absent or None in `scores`
    and are then stored as not answered; closed ones are stored as not rated by design (their
    previous scores survive in the history). Idempotent: submitting the same values twice
    changes nothing.
    """
    assignment = _lock_assignment(reviewer=reviewer, idea=idea)
    if assignment.status == Assignment.Status.DECLINED:
        raise ApplicationError("You declined this idea; it can no longer be rated.")
    rubric = rubric_for_idea(idea)
    dimensions = dimensions_of(rubric)
    answers = answers or {}
    rationales = rationales or {}
    merged, errors = resolve_scores(dimensions, scores, answers)
    rules = [d.rule() for d in dimensions]
    errors += validate_scores(rules, merged)
    if errors:
        raise ApplicationError("The rating was not saved.", errors=errors)

    statuses = screening_statuses(rules, merged)
    states = []
    for dim in dimensions:
        status = statuses[dim.key]
        scored = status == Rating.Status.SCORED
        states.append(
            (
                dim,
                status,
                merged.get(dim.key) if scored else None,
                answers.get(dim.key) if scored and dim.questions else None,
                (rationales.get(dim.key) or "").strip() if status != GATED else "",
            )
        )
    changed = _store_screening(reviewer=reviewer, idea=idea, states=states, source=source)
    if assignment.status != Assignment.Status.COMPLETED:
        assignment.status = Assignment.Status.COMPLETED
        assignment.save(update_fields=["status", "updated_at"])
    if changed:
        ratings_changed(reviewer_ids=[reviewer.id])
    return screening_of(
        reviewer=reviewer, idea=idea, assignment=assignment, rubric=rubric, dimensions=dimensions
    )


@transaction.atomic
def rating_decline(
    *, reviewer: User, idea: Idea, reason: str = "", source: str = Rating.Source.FORM
) -> Assignment:
    """Recuse the reviewer from an idea: every dimension is stored as declined, with history."""
    assignment = _lock_assignment(reviewer=reviewer, idea=idea)
    states = [
        (dim, Rating.Status.DECLINED.value, None, None, "") for dim in dimensions_for_idea(idea)
    ]
    _store_screening(reviewer=reviewer, idea=idea, states=states, source=source)
    assignment.status = Assignment.Status.DECLINED
    assignment.decline_reason = reason.strip()
    assignment.save(update_fields=["status", "decline_reason", "updated_at"])
    ratings_changed(reviewer_ids=[reviewer.id])
    return assignment


@transaction.atomic
def rating_decline_undo(
    *, reviewer: User, idea: Idea, source: str = Rating.Source.FORM
) -> Assignment:
    """Take a decline back: every rating returns to what it was before, with history.

    Ratings the decline created (the idea had not been rated yet) are removed with their one
    history row, so the idea is pending again exactly as before; ratings it overwrote get their
    old values back through a new history row. Refused once somebody has acted on the decline.
    """
    assignment = _lock_assignment(reviewer=reviewer, idea=idea)
    blocker = decline_undo_blocker(assignment)
    if blocker:
        raise ApplicationError(f"The decline cannot be taken back: {blocker}")
    restored: list[tuple[Dimension, str, int | None, Mapping[str, Any] | None, str]] = []
    for row in decline_rows(assignment):
        rating = Rating.objects.select_related("dimension").get(pk=row.rating_id)
        if rating.status != Rating.Status.DECLINED:
            continue
        if not row.old_status:
            rating.delete()
            continue
        restored.append(
            (rating.dimension, row.old_status, row.old_score, row.old_answers, row.old_rationale)
        )
    if restored:
        _store_screening(reviewer=reviewer, idea=idea, states=restored, source=source)
    restored_any = any(status == Rating.Status.SCORED for _, status, *_rest in restored)
    assignment.status = Assignment.Status.COMPLETED if restored_any else Assignment.Status.PENDING
    assignment.decline_reason = ""
    assignment.save(update_fields=["status", "decline_reason", "updated_at"])
    ratings_changed(reviewer_ids=[reviewer.id])
    return assignment
