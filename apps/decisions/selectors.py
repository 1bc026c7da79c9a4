"""Reads for the decisions app: the model's inputs, stored snapshots, routing candidates."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import Count, QuerySet
from scipy import sparse

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.core.models import SNAPSHOT_NEWEST_FIRST
from apps.decisions.models import DecisionSlice, DecisionSnapshot, DomainRouting, RoutingSuggestion
from apps.decisions.ranking.board import FRAME_COLUMNS, people_rows, scales_from
from apps.decisions.ranking.model import ALL, Scale
from apps.decisions.ranking.rows import slice_rows
from apps.judges.models import JudgeConfig, JudgeFinal, JudgeRun, JudgeScheduleRequest
from apps.judges.selectors import latest_done_runs
from apps.judges.vectors import item_vector_matrix
from apps.screening.models import Assignment, Rating
from apps.screening.selectors import frame as ratings

SCOPE = "all"
# The rating frame's columns the decision recompute reads: the board's and the times.
DECISION_FRAME_COLUMNS = [*FRAME_COLUMNS, "rated_at"]


@dataclass
class DecisionInputs:
    frame: pd.DataFrame  # the rating frame (apps.screening.selectors.frame.rating_frame)
    # reviewer_id, reviewer, idea_id, dimension, score, confidence, signal, panel_size
    predictions: pd.DataFrame
    catalog: pd.DataFrame  # idea_id, idea, title, domain
    scales: dict[str, Scale]
    # Per domain key: (idea ids, their TF-IDF rows) for the domain text model.
    vectors: dict[str, tuple[np.ndarray, sparse.csr_matrix]] = field(default_factory=dict)


def decision_inputs() -> DecisionInputs:
    """Every rating (any date: a decision weighs all the evidence), the judges' latest
    predictions (score, confidence and what they rest on), the catalogue, the rubric's
    scales and the ideas' text vectors."""
    catalog = ratings.idea_catalog()
    return DecisionInputs(
        # The ideas' labels come with the catalogue: the frame needs none of its own.
        frame=ratings.rating_frame(columns=DECISION_FRAME_COLUMNS),
        predictions=prediction_frame(),
        catalog=catalog,
        scales=scales_from(ratings.rubric_scales(), ratings.rubric_categories()),
        vectors=domain_vectors(catalog),
    )


def domain_vectors(catalog: pd.DataFrame) -> dict[str, tuple[np.ndarray, sparse.csr_matrix]]:
    """Per domain: its idea ids (sorted) and their stored TF-IDF rows (apps.judges.vectors:
    the offline judge's representation, computed once per domain and kept), for the text
    model. No network: the vectors are fitted locally."""
    out: dict[str, tuple[np.ndarray, sparse.csr_matrix]] = {}
    for domain, cat in catalog.groupby("domain", sort=True):
        ids = np.sort(cat["idea_id"].to_numpy(np.int64))
        matrix = item_vector_matrix(ids.tolist())
        if matrix is None:
            continue
        out[str(domain)] = (ids, matrix)
    return out


def snapshot_latest() -> DecisionSnapshot | None:
    return (
        DecisionSnapshot.objects.filter(scope=SCOPE, status=DecisionSnapshot.Status.DONE)
        .order_by(*SNAPSHOT_NEWEST_FIRST)
        .first()
    )


def snapshot_in_progress() -> DecisionSnapshot | None:
    return (
        DecisionSnapshot.objects.filter(
            scope=SCOPE,
            status__in=[DecisionSnapshot.Status.QUEUED, DecisionSnapshot.Status.RUNNING],
        )
        .order_by("-created_at", "-id")
        .first()
    )


def snapshot_last_failure(*, after: dt.datetime | None) -> DecisionSnapshot | None:
    rows = DecisionSnapshot.objects.filter(scope=SCOPE, status=DecisionSnapshot.Status.FAILED)
    if after is not None:
        rows = rows.filter(created_at__gt=after)
    return rows.order_by("-created_at", "-id").first()


def snapshot_domains(snapshot: DecisionSnapshot) -> list[str]:
    return sorted(set(snapshot.slices.values_list("domain", flat=True)))


def snapshot_rows(
    snapshot: DecisionSnapshot, *, domain: str, dimension: str, evidence: str = "all"
) -> list[dict]:
    """The stored rows of one ranking; ``evidence`` "people": the board fitted on people's
    reads only (no predictions, no text model), stored as its figures alone and merged with
    the full board's rows (ranking/board.py: people_rows)."""
    pieces = {
        s.evidence: s.rows
        for s in DecisionSlice.objects.filter(
            snapshot=snapshot,
            domain=domain,
            dimension=dimension,
            evidence__in=["all", evidence],
        )
    }
    full = slice_rows(pieces.get("all") or [])
    if evidence == DecisionSlice.Evidence.PEOPLE:
        return people_rows(full, slice_rows(pieces.get("people") or []))
    return full


def snapshot_domain_slices(snapshot: DecisionSnapshot, *, domain: str) -> dict[str, Any]:
    """Every ranking of one domain (dimension key or "__all__" -> its stored slice, as
    ranking/rows.py reads it), on the full board (the people-only slices hold figures alone):
    one query."""
    return {
        dim: rows
        for dim, rows in DecisionSlice.objects.filter(
            snapshot=snapshot, domain=domain, evidence=DecisionSlice.Evidence.ALL
        )
        .order_by("dimension")
        .values_list("dimension", "rows")
    }


def snapshot_overall_slices(snapshot: DecisionSnapshot, *, domains: Sequence[str]) -> list[Any]:
    """The overall rankings' stored slices (full board) of the given domains, for routing."""
    return list(
        DecisionSlice.objects.filter(
            snapshot=snapshot,
            domain__in=list(domains),
            dimension=ALL,
            evidence=DecisionSlice.Evidence.ALL,
        )
        .order_by("domain")
        .values_list("rows", flat=True)
    )


def ratings_changed_since(snapshot: DecisionSnapshot) -> int:
    """Ratings made or changed after the snapshot read them (0 when it is fresh)."""
    if snapshot.started_at is None:
        return 0
    return Rating.objects.filter(updated_at__gt=snapshot.started_at).count()


@dataclass
class PredictionWork:
    """Judge work the board would use that it has not read yet (Decide's freshness line)."""

    runs_active: int  # prediction runs queued or running
    schedules: int  # reviewers whose judge scheduling (which starts prediction runs) is pending
    finished_since: int  # prediction runs finished after the snapshot read its inputs

    @property
    def pending(self) -> bool:
        return bool(self.runs_active or self.schedules or self.finished_since)


def prediction_work(snapshot: DecisionSnapshot | None) -> PredictionWork:
    """The board weighs the latest done prediction runs (``prediction_frame``): it is up to
    date only when no such run is queued, running, about to be scheduled, or done since."""
    runs = JudgeRun.objects.filter(purpose=JudgeRun.Purpose.PREDICTION)
    finished = 0
    if snapshot is not None and snapshot.started_at is not None:
        finished = runs.filter(
            status=JudgeRun.Status.DONE, finished_at__gt=snapshot.started_at
        ).count()
    return PredictionWork(
        runs_active=runs.filter(status__in=JudgeRun.ACTIVE).count(),
        schedules=JudgeScheduleRequest.objects.count(),
        finished_since=finished,
    )


@dataclass
class RoutingCandidates:
    # (reviewer id, idea id) pairs a reviewer may be routed to: an (n, 2) array, in the order
    # of reviewer id, their domain keys, then the ideas' external ids.
    pairs: np.ndarray
    open_load: dict[int, int]  # reviewer id -> pending assignments


def routing_candidates(*, rated: np.ndarray) -> RoutingCandidates:
    """Pairs of an active reviewer and an idea of one of their domains that they have neither
    rated nor been assigned (declined included: they recused themselves).

    ``rated``: the (reviewer id, idea id) of every stored rating (n x 2; the decision
    recompute's rating frame holds them all, so they are not read twice). Built on arrays: at
    scale there are a million pairs (200 reviewers x 5,500 ideas each)."""
    reviewers = User.objects.filter(role=User.Role.REVIEWER, is_active=True)
    domains_of: dict[int, set[str]] = {}
    for uid, key in reviewers.filter(reviewer_profile__domains__isnull=False).values_list(
        "id", "reviewer_profile__domains__key"
    ):
        domains_of.setdefault(uid, set()).add(key)
    ideas_of: dict[str, list[int]] = {}
    for iid, key in Idea.objects.values_list("id", "patent__domain__key"):
        ideas_of.setdefault(key, []).append(iid)
    idea_arrays = {key: np.array(ids, dtype=np.int64) for key, ids in ideas_of.items()}
    # Sorted once: each reviewer's pairs are looked up by binary search.
    taken = np.unique(
        np.concatenate(
            [
                _pair_keys(Assignment.objects.values_list("reviewer_id", "idea_id")),
                # Distinct first (hashed): each rated pair comes once per dimension.
                pd.unique(rated[:, 0] * PAIR_KEY + rated[:, 1]),
            ]
        )
    )
    blocks = []
    for uid, keys in sorted(domains_of.items()):
        for key in sorted(keys):
            ids = idea_arrays.get(key)
            if ids is None or not len(ids):
                continue
            wanted = uid * PAIR_KEY + ids
            at = np.minimum(np.searchsorted(taken, wanted), max(len(taken) - 1, 0))
            free = ~(taken[at] == wanted) if len(taken) else np.ones(len(ids), bool)
            blocks.append(np.column_stack([np.full(int(free.sum()), uid, np.int64), ids[free]]))
    pairs = np.concatenate(blocks) if blocks else np.zeros((0, 2), dtype=np.int64)
    return RoutingCandidates(pairs=pairs, open_load=open_load())


# Pairs (reviewer, idea) as one integer: reviewer * PAIR_KEY + idea.
PAIR_KEY = 1 << 32


def _pair_keys(rows: QuerySet) -> np.ndarray:
    pairs = np.array(list(rows), dtype=np.int64).reshape(-1, 2)
    return pairs[:, 0] * PAIR_KEY + pairs[:, 1]


def open_load() -> dict[int, int]:
    """Reviewer id -> pending assignments (the routing's cap counts them)."""
    return dict(
        Assignment.objects.filter(status=Assignment.Status.PENDING)
        .values_list("reviewer_id")
        .annotate(n=Count("id"))
        .values_list("reviewer_id", "n")
    )


def open_suggestions(*, domain: str | None = None) -> QuerySet[RoutingSuggestion]:
    rows = RoutingSuggestion.objects.filter(status=RoutingSuggestion.Status.OPEN).select_related(
        "reviewer", "idea__patent__domain"
    )
    if domain:
        rows = rows.filter(idea__patent__domain__key=domain)
    return rows.order_by("idea__patent__domain__key", "reviewer__username", "-value", "id")


def automatic_domains() -> set[int]:
    return set(DomainRouting.objects.filter(automatic=True).values_list("domain_id", flat=True))


def routing_settings() -> list[dict]:
    """Every domain with its routing mode and its open suggestions, for the assignments page."""
    auto = automatic_domains()
    counts = dict(
        RoutingSuggestion.objects.filter(status=RoutingSuggestion.Status.OPEN)
        .values_list("idea__patent__domain_id")
        .annotate(n=Count("id"))
        .values_list("idea__patent__domain_id", "n")
    )
    return [
        {"domain": d, "automatic": d.pk in auto, "open": counts.get(d.pk, 0)}
        for d in Domain.objects.order_by("name")
    ]


def prediction_frame() -> pd.DataFrame:
    """The judges' predictions for reviewers on ideas they have not rated, one per target.

    From the JudgeFinal rows of the latest done PREDICTION run of every scope (as
    apps.judges.selectors.unrated_predictions); where several finals exist for the same
    (reviewer, idea, dimension), a personalized one beats the others, then the larger k, then
    the newer run.
    """
    run_ids = latest_done_runs(purpose=JudgeRun.Purpose.PREDICTION)
    rows = list(
        JudgeFinal.objects.filter(run_id__in=run_ids, score__isnull=False)
        .values_list(
            "reviewer_id",
            "reviewer__username",
            "idea_id",
            "dimension__key",
            "score",
            "confidence",
            "signal",
            "panel_size",
            "kind",
            "k",
            "run_id",
        )
        .order_by()
    )
    # signal and panel_size: what the prediction rests on (board.prediction_basis).
    columns = [
        "reviewer_id",
        "reviewer",
        "idea_id",
        "dimension",
        "score",
        "confidence",
        "signal",
        "panel_size",
    ]
    frame = pd.DataFrame(rows, columns=[*columns, "kind", "k", "run_id"])
    if frame.empty:
        return frame[columns]
    frame["personal"] = frame["kind"] == JudgeConfig.Kind.PERSONALIZED
    frame = frame.sort_values(["personal", "k", "run_id"], ascending=False, kind="stable")
    frame = frame.drop_duplicates(["reviewer_id", "idea_id", "dimension"])
    return frame[columns].reset_index(drop=True)
