"""Reads of the decision record: shortlist sizes, current marks, a mark's history, and the
board as a decision sees it (the default ranking of a domain, cut at its N)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, QuerySet

from apps.catalog.models import Domain, Idea
from apps.decisions import presenters as P
from apps.decisions import selectors as board_selectors
from apps.decisions.models import DecisionMark, DecisionSnapshot, DomainShortlist
from apps.decisions.ranking.cut import mark_cut, with_top_n
from apps.decisions.ranking.model import ALL

DEFAULT_SHORTLIST_SIZE: int = getattr(settings, "DECISIONS_SHORTLIST_SIZE", 10)


def shortlist_size(*, domain: str) -> int:
    """The domain's N (DEFAULT_SHORTLIST_SIZE until a manager sets it)."""
    size = DomainShortlist.objects.filter(domain__key=domain).values_list("size", flat=True).first()
    return int(size) if size else DEFAULT_SHORTLIST_SIZE


def cut_rows(rows: list[dict[str, Any]], *, sort: str, n: int) -> list[dict[str, Any]]:
    """One domain's stored rows (all of them) with P(top n), in the order ``sort``, cut at n:
    each row gains ``p_top_n``, ``cut_rank``, ``in_shortlist`` and ``shortlist_size``."""
    ordered = P.sort_rows(with_top_n(rows, n=n), sort=sort)
    return [{**r, "shortlist_size": n} for r in mark_cut(ordered, n=n)]


@dataclass
class DomainBoard:
    """A domain's default ranking (overall, lower bound first) as decisions record it."""

    snapshot: DecisionSnapshot | None
    domain: str
    n: int
    rows: list[dict[str, Any]]  # cut_rows of the overall ranking

    def row_for(self, idea_id: int) -> dict[str, Any] | None:
        return next((r for r in self.rows if r["idea_id"] == idea_id), None)


def domain_board(*, domain: str, n: int | None = None) -> DomainBoard:
    snapshot = board_selectors.snapshot_latest()
    n = n or shortlist_size(domain=domain)
    rows: list[dict[str, Any]] = []
    if snapshot is not None:
        stored = board_selectors.snapshot_rows(snapshot, domain=domain, dimension=ALL)
        rows = cut_rows(stored, sort=P.DEFAULT_SORT, n=n)
    return DomainBoard(snapshot=snapshot, domain=domain, n=n, rows=rows)


def figures_of(board: DomainBoard, idea_id: int) -> dict[str, Any]:
    """What a mark keeps of the board: the snapshot and the idea's row as shown on Decide."""
    row = board.row_for(idea_id)
    if board.snapshot is None or row is None:
        return {}
    return {
        "id": board.snapshot.id,
        "computed_at": board.snapshot.computed_at.isoformat()
        if board.snapshot.computed_at
        else None,
        "ranking": "overall",
        "ordered_by": P.SORTS[P.DEFAULT_SORT],
        "rank": row["cut_rank"],
        "estimate": row["estimate"],
        "low": row["low"],
        "high": row["high"],
        "shortlist_size": board.n,
        "p_top_n": row["p_top_n"],
        "in_shortlist": row["in_shortlist"],
        "judge_share": row.get("judge_share"),
        "n_reviewers": row.get("n_reviewers"),
    }


def marks_current(*, domain: str) -> QuerySet[DecisionMark]:
    """The latest version of every marked idea of the domain (one row per idea).

    A correlated subquery rather than DISTINCT ON: the embedded default (SQLite, bin/demo)
    has no DISTINCT ON."""
    newer = DecisionMark.objects.filter(
        idea_id=OuterRef("idea_id"), version__gt=OuterRef("version")
    )
    return (
        DecisionMark.objects.filter(domain__key=domain)
        .exclude(Exists(newer))
        .order_by("idea_id")
        .select_related("idea", "decided_by", "domain")
    )


def marks_current_by_idea(*, domain: str) -> dict[int, DecisionMark]:
    return {m.idea_id: m for m in marks_current(domain=domain)}


def mark_history(*, idea: Idea) -> QuerySet[DecisionMark]:
    """Every version of the idea's mark, newest first."""
    return (
        DecisionMark.objects.filter(idea=idea)
        .order_by("-version")
        .select_related("decided_by", "domain", "idea")
    )


def domain_of(key: str) -> Domain | None:
    if not key or len(key) > 64 or "\x00" in key:
        return None
    return Domain.objects.filter(key=key).first()
