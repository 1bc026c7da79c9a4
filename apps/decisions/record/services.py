"""Writes of the decision record: a domain's shortlist size, and a mark on an idea.

Managers record decisions: the one write the house rule "managers read, never edit" grants
them (issue 26), besides admins. Reviewers never reach any of it.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.core.errors import ApplicationError, FieldError, PermissionDenied
from apps.decisions.models import DecisionMark, DomainShortlist
from apps.decisions.record import selectors

NOTE_MAX = 4000
SIZE_MAX = 10_000


def _check_decider(actor: User) -> None:
    if not actor.can_read_all_ratings:
        raise PermissionDenied("Only managers and admins record decisions.")


@transaction.atomic
def shortlist_size_set(*, actor: User, domain: Domain, size: int) -> DomainShortlist:
    """Set the domain's N. Nothing to recompute: the cut and P(top N) are read from the
    stored posterior summaries for whatever N is asked (apps/decisions/ranking/cut.py)."""
    _check_decider(actor)
    if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= SIZE_MAX:
        raise ApplicationError(
            "The shortlist size was not changed.",
            errors=[
                FieldError(
                    field="n",
                    message=f"must be a whole number from 1 to {SIZE_MAX}",
                    value=str(size),
                )
            ],
        )
    row, _ = DomainShortlist.objects.update_or_create(
        domain=domain, defaults={"size": size, "updated_by": actor}
    )
    return row


@transaction.atomic
def decision_mark_record(*, actor: User, idea: Idea, mark: str, note: str = "") -> DecisionMark:
    """Record a new version of the idea's mark with the board's figures as the decider sees
    them (the domain's default ranking, cut at its N). Append-only: earlier versions stay.

    Idempotent: the same mark and note as the current version adds nothing and returns it.
    Versions of one idea are serialised by locking the idea's row, so two managers marking at
    once get versions n+1 and n+2, never a clash.
    """
    _check_decider(actor)
    errors = []
    if mark not in DecisionMark.Mark.values:
        errors.append(
            FieldError(
                field="mark",
                message="must be one of " + ", ".join(DecisionMark.Mark.values),
                value=str(mark),
            )
        )
    note = (note or "").strip()
    if len(note) > NOTE_MAX or "\x00" in note:
        errors.append(
            FieldError(field="note", message=f"at most {NOTE_MAX} characters, no NUL characters")
        )
    if errors:
        raise ApplicationError("The decision was not recorded.", errors=errors)
    Idea.objects.select_for_update().filter(pk=idea.pk).first()
    domain = idea.patent.domain
    current = DecisionMark.objects.filter(idea=idea).order_by("-version").first()
    if current is not None and current.mark == mark and current.note == note:
        return current
    board = selectors.domain_board(domain=domain.key)
    if board.snapshot is None:
        raise ApplicationError(
            "The decision was not recorded: the ranking has not been computed yet, and a "
            "decision is recorded with the board it was made on. Compute it on Decide first."
        )
    version = (DecisionMark.objects.filter(idea=idea).aggregate(v=Max("version"))["v"] or 0) + 1
    return DecisionMark.objects.create(
        idea=idea,
        domain=domain,
        version=version,
        mark=mark,
        note=note,
        decided_by=actor,
        decided_at=timezone.now(),
        figures=selectors.figures_of(board, idea.pk),
    )
