"""Writes for the decisions app: recompute the model's snapshot, suggest and accept reads.

The snapshot is a kind of apps/core/snapshots.py, declared here as ``DECISIONS``: every rating
change and every finished prediction run calls ``decisions_mark_stale()`` after its commit (the
hooks in settings); one queued row per scope collects the burst and a worker computes it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

import numpy as np
import orjson
import pandas as pd
from django.conf import settings
from django.db import connection, models, transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.core import snapshots
from apps.core.errors import ApplicationError, FieldError, PermissionDenied
from apps.core.gc_freeze import cycle_collection_paused
from apps.decisions import selectors
from apps.decisions.models import DecisionSlice, DecisionSnapshot, DomainRouting, RoutingSuggestion
from apps.decisions.ranking.board import DEFAULT_TOP_SHARE, build_boards, unread_predictions
from apps.decisions.ranking.cut import top_n_of
from apps.decisions.ranking.model import ALL, Z90
from apps.decisions.ranking.routing import (
    IdeaStates,
    Policy,
    one_read_var,
    pair_confidence,
    route,
)
from apps.decisions.ranking.rows import slice_column
from apps.decisions.record.selectors import shortlist_size
from apps.screening.models import Assignment
from apps.screening.selectors import frame as ratings

logger = logging.getLogger(__name__)

# The decision snapshots (apps/core/snapshots.py): debounced by DECISIONS_DEBOUNCE_SECONDS (10 s
# unless set), the newest 10 finished kept.
DECISIONS = snapshots.SnapshotKind(
    DecisionSnapshot,
    task="decisions.recompute",
    what="decision snapshot",
    keep=10,
    debounce="DECISIONS_DEBOUNCE_SECONDS",
    debounce_default=10,
    unreachable="The task queue is unreachable; the ranking was not recomputed. Try again later.",
)
# A numpy float in a row is written as the json module writes it (a float subclass).
JSON_OPTIONS = orjson.OPT_SERIALIZE_NUMPY
# The shortlist: the top share of each domain (P(top X %) on the page, the routing's target).
TOP_SHARE: float = getattr(settings, "DECISIONS_TOP_SHARE", DEFAULT_TOP_SHARE)
# The routing policy (apps/decisions/ranking/routing.py); settings may override any field.
POLICY = Policy(**{**getattr(settings, "DECISIONS_ROUTING", {}), "share": TOP_SHARE})


def decisions_resend_lost() -> list[int]:
    """Beat job: queued recomputes whose message was lost (a Redis restart) are sent again."""
    return DECISIONS.resend_lost()


def decisions_mark_stale() -> None:
    """Ratings or predictions changed (after their commit): queue one debounced recompute.

    A dead broker is logged and recorded on the snapshot, not raised: the change that called
    this is already saved. A change during a burst costs one SELECT (the queued row exists).
    """
    DECISIONS.mark_stale(selectors.SCOPE)


def decisions_inputs_changed(*, reviewer_ids: Sequence[int]) -> None:
    """A RATINGS_CHANGED_HOOKS and PREDICTIONS_CHANGED_HOOKS hook: the model reads every rating
    and prediction, so who changed does not matter."""
    decisions_mark_stale()


def decisions_request_recompute(*, actor: User) -> DecisionSnapshot:
    """A manager's "Recompute now": join or create the queued row and send it at once."""
    if not actor.can_read_all_ratings:
        raise PermissionDenied("Only managers and admins recompute the ranking.")
    return DECISIONS.request(selectors.SCOPE, requested_by=actor)


def decisions_recompute(*, snapshot_id: int) -> DecisionSnapshot:
    """Fit the model, store the board and the routing suggestions; idempotent (claimed row)."""
    return DECISIONS.compute(snapshot_id, _compute, claim_fields={"progress": 5})


def _compute(snapshot: DecisionSnapshot, elapsed_ms: Callable[[], int]) -> None:
    # The recompute builds millions of small objects (the slices' columns, the overall rows and
    # their lists), none in a cycle, and each collection their allocation triggers scanned every
    # live one for nothing (half the rows' CPU at a million ratings when every slice was stored
    # as rows); the cycles pandas' frames form are collected once at the end.
    with cycle_collection_paused(collect_after=True):
        _compute_board(snapshot, elapsed_ms)


def _compute_board(snapshot: DecisionSnapshot, elapsed_ms: Callable[[], int]) -> None:
    snapshot_id = snapshot.id
    inputs = selectors.decision_inputs()
    DECISIONS.progress(snapshot_id, 30)
    # The board, and the same model on people's reads alone (the page's evidence=people). A
    # domain whose inputs are as the last board's keeps that board's rows (a rating change
    # refits its own domain only).
    previous = selectors.snapshot_latest()
    preds = unread_predictions(inputs.frame, inputs.predictions)
    boards, summary = build_boards(
        inputs.frame,
        predictions=preds,
        unread=True,
        catalog=inputs.catalog,
        scales=inputs.scales,
        top_share=TOP_SHARE,
        vectors=inputs.vectors,
        previous=previous.result if previous is not None else None,
    )
    kept = summary["kept"]
    # The overall rankings' slices (routing, the counts): those fitted now, then the kept ones.
    overall = [s for s in boards["all"] if s["dimension"] == ALL]
    if previous is not None and kept:
        overall += selectors.snapshot_overall_slices(previous, domains=kept)
    DECISIONS.progress(snapshot_id, 70)
    slices = {
        (s["domain"], s["dimension"], evidence): s
        for evidence, board in boards.items()
        for s in board
    }
    suggestions = _suggest(
        overall, preds, rated=inputs.frame[["reviewer_id", "idea_id"]].to_numpy(np.int64)
    )
    summary["routing"] = {
        "policy": POLICY.__dict__,
        "suggested": len(suggestions),
    }
    summary["ratings"] = rating_counts(inputs.frame, overall)
    latest = inputs.frame["rated_at"].max() if len(inputs.frame) else None
    with transaction.atomic():
        _store_slices(snapshot_id, slices)
        if previous is not None and kept:
            _copy_slices(previous.id, snapshot_id, kept)
        _store_suggestions(snapshot_id, suggestions)
        DECISIONS.done(
            snapshot_id,
            elapsed_ms,
            progress=100,
            result=summary,
            n_ratings=len(inputs.frame),
            n_predictions=len(preds),
            latest_rating_at=None
            if latest is None or pd.isna(latest)
            else latest.round("us").to_pydatetime(),
        )
    _route_automatically()


def _store_slices(snapshot_id: int, slices: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    """The board's slices, one per (domain, dimension, evidence) (ranking/rows.py).

    On PostgreSQL through one COPY, each slice's JSON written once: an INSERT of this size
    (59 MB of JSON at a million ratings) spent most of its time quoting the JSON
    into SQL literals in Python, and orjson writes the JSON several times faster than the
    standard library (the same values: PostgreSQL stores jsonb, not the text). Elsewhere
    (SQLite) the ORM's bulk insert."""
    if connection.vendor != "postgresql":
        DecisionSlice.objects.bulk_create(
            [
                DecisionSlice(snapshot_id=snapshot_id, domain=d, dimension=k, evidence=e, rows=r)
                for (d, k, e), r in slices.items()
            ],
            batch_size=100,
        )
        return
    table, columns = _slice_table()
    with (
        connection.cursor() as cur,
        cur.cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
    ):
        for (d, k, e), r in slices.items():
            copy.write_row((snapshot_id, d, k, e, orjson.dumps(r, option=JSON_OPTIONS).decode()))


def _copy_slices(from_snapshot_id: int, to_snapshot_id: int, domains: Sequence[str]) -> None:
    """The kept domains' slices, both boards, copied from the earlier snapshot by the
    database (the rows are not read back into Python)."""
    table, columns = _slice_table()
    snapshot, rest = columns[0], ", ".join(columns[1:])
    marks = ", ".join(["%s"] * len(domains))
    with connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO {table} ({snapshot}, {rest}) SELECT %s, {rest} FROM {table} "
            f"WHERE {snapshot} = %s AND {columns[1]} IN ({marks})",
            [to_snapshot_id, from_snapshot_id, *domains],
        )


def _slice_table() -> tuple[str, list[str]]:
    """DecisionSlice's table and its columns (snapshot, domain, dimension, evidence, rows),
    quoted for raw SQL."""
    meta = DecisionSlice._meta
    columns = [
        connection.ops.quote_name(str(cast(models.Field, meta.get_field(name)).column))
        for name in ("snapshot", "domain", "dimension", "evidence", "rows")
    ]
    return connection.ops.quote_name(meta.db_table), columns


def rating_counts(frame: pd.DataFrame, overall: Sequence[Any]) -> dict[str, int]:
    """What the snapshot's rating count is made of, so Decide can say what it counts (the Data
    page counts scored ratings only): every stored rating, by status, and the category answers
    among the scored ones (kept out of the estimate); ``overall``: every domain's overall
    ranking's slice."""
    by_status = {str(k): v for k, v in frame["status"].value_counts().items()} if len(frame) else {}
    return {
        "all": int(len(frame)),
        "scored": int(by_status.get("scored", 0)),
        "gated": int(by_status.get("gated", 0)),
        "declined": int(by_status.get("declined", 0)),
        "unanswered": int(by_status.get("unanswered", 0)),
        "category": int(sum(sum(slice_column(s, "n_category")) for s in overall)),
    }


def _suggest(overall: Sequence[Any], preds: pd.DataFrame, *, rated: np.ndarray) -> list:
    """The routing round for the snapshot's overall rankings (see ranking/routing.py);
    ``overall``: each domain's overall slice; ``rated``: the (reviewer id, idea id) of every
    rating (selectors.routing_candidates).

    Each idea carries the board's own P(top N) for its domain's shortlist size (the figure
    Decide shows beside the cut) and the dimension to name, so the reasons say what the
    manager's board says. Read off the slices' columns: no row is built."""
    if not any(slice_column(s, "idea_id") for s in overall):
        return []
    labels = ratings.dimension_labels()
    columns: dict[str, list[Any]] = {}
    for stored in overall:
        ids = slice_column(stored, "idea_id")
        if not ids:
            continue
        domain = stored["domain"] if isinstance(stored, dict) else stored[0]["domain"]
        size = shortlist_size(domain=domain)
        low = np.asarray(slice_column(stored, "low"), dtype=float)
        high = np.asarray(slice_column(stored, "high"), dtype=float)
        estimate = slice_column(stored, "estimate")
        focus = slice_column(stored, "focus") if _has(stored, "focus") else [""] * len(ids)
        for name, values in (
            ("idea_id", ids),
            ("domain", [domain] * len(ids)),
            ("estimate", estimate),
            ("sd", (high - low) / 2 / Z90),
            ("n_reads", slice_column(stored, "n_reviewers")),
            ("judge_share", [x or 0.0 for x in slice_column(stored, "judge_share")]),
            ("p_top", top_n_of(estimate, low, high, n=size)),
            ("top_n", [size] * len(ids)),
            ("focus", [labels.get(f, f) for f in focus]),
        ):
            columns.setdefault(name, []).extend(values)
    states = IdeaStates.from_columns(**columns)
    cands = selectors.routing_candidates(rated=rated)
    return route(
        ideas=states,
        candidates=cands.pairs,
        open_load=cands.open_load,
        confidence=pair_confidence(preds),
        one_read_var=one_read_var(states),
        policy=POLICY,
    )


def _has(stored: Any, key: str) -> bool:
    """Whether a stored slice (columns, or the rows of an old snapshot) holds ``key``."""
    if isinstance(stored, dict):
        return stored.get(key) is not None
    return bool(stored) and key in stored[0]


def _store_suggestions(snapshot_id: int, suggestions: list) -> None:
    """The new round replaces the open suggestions of the previous one."""
    RoutingSuggestion.objects.filter(status=RoutingSuggestion.Status.OPEN).update(
        status=RoutingSuggestion.Status.SUPERSEDED, decided_at=timezone.now()
    )
    RoutingSuggestion.objects.bulk_create(
        [
            RoutingSuggestion(
                snapshot_id=snapshot_id,
                reviewer_id=s.reviewer_id,
                idea_id=s.idea_id,
                kind=s.kind,
                value=round(s.value, 6),
                reason=s.reason,
            )
            for s in suggestions
        ],
        batch_size=1000,
        ignore_conflicts=True,
    )


def _route_automatically() -> None:
    auto = selectors.automatic_domains()
    if not auto:
        return
    ids = list(
        RoutingSuggestion.objects.filter(
            status=RoutingSuggestion.Status.OPEN, idea__patent__domain_id__in=auto
        ).values_list("id", flat=True)
    )
    if ids:
        suggestions_accept(actor=None, suggestion_ids=ids)


@transaction.atomic
def suggestions_accept(*, actor: User | None, suggestion_ids: Iterable[int]) -> int:
    """Turn open suggestions into assignments carrying their reason; returns how many.

    actor None is the system (a domain's automatic routing). Suggestions that are no longer
    open, or whose reviewer has since reached the cap of pending assignments, are skipped;
    an existing assignment of the same pair is left as it is. Safe to run twice.
    """
    if actor is not None and not actor.is_admin:
        raise PermissionDenied("Only admins accept routing suggestions.")
    ids = [int(i) for i in suggestion_ids]
    if not ids:
        raise ApplicationError(
            "Nothing was accepted.",
            errors=[FieldError(field="suggestions", message="choose at least one suggestion")],
        )
    rows = list(
        RoutingSuggestion.objects.select_for_update()
        .filter(id__in=ids, status=RoutingSuggestion.Status.OPEN)
        .select_related("idea__patent")
        .order_by("-value", "id")
    )
    load = selectors.open_load()
    taken = set(
        Assignment.objects.filter(
            reviewer_id__in={r.reviewer_id for r in rows}, idea_id__in={r.idea_id for r in rows}
        ).values_list("reviewer_id", "idea_id")
    )
    new: list[Assignment] = []
    accepted: list[int] = []
    for s in rows:
        if (s.reviewer_id, s.idea_id) in taken or load.get(s.reviewer_id, 0) >= POLICY.cap:
            continue
        new.append(
            Assignment(reviewer_id=s.reviewer_id, idea=s.idea, assigned_by=actor, reason=s.reason)
        )
        load[s.reviewer_id] = load.get(s.reviewer_id, 0) + 1
        taken.add((s.reviewer_id, s.idea_id))
        accepted.append(s.id)
    Assignment.objects.bulk_create(new, ignore_conflicts=True)
    RoutingSuggestion.objects.filter(id__in=accepted).update(
        status=RoutingSuggestion.Status.ACCEPTED, decided_at=timezone.now(), decided_by=actor
    )
    return len(accepted)


@transaction.atomic
def domain_routing_set(*, actor: User, domain: Domain, automatic: bool) -> DomainRouting:
    """Turn a domain's automatic routing on or off (admins); on accepts its open suggestions."""
    if not actor.is_admin:
        raise PermissionDenied("Only admins change routing.")
    setting, _ = DomainRouting.objects.update_or_create(
        domain=domain, defaults={"automatic": automatic, "updated_by": actor}
    )
    if automatic:
        ids = list(
            RoutingSuggestion.objects.filter(
                status=RoutingSuggestion.Status.OPEN, idea__patent__domain=domain
            ).values_list("id", flat=True)
        )
        if ids:
            suggestions_accept(actor=None, suggestion_ids=ids)
    return setting
