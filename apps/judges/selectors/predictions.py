"""Reads of judge predictions: finals and truth frames, a reviewer's unrated predictions and
shortlists, the finals of a case."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import pandas as pd
from django.db.models import F, Q, QuerySet

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.judges.models import (
    JudgeFinal,
    JudgePrediction,
    JudgeRun,
    JudgeShortlist,
    PanelShortlist,
)
from apps.judges.selectors.common import dimension_labels
from apps.judges.selectors.runs import latest_done_runs
from apps.screening.models import Rating


def finals_frame(*, run_ids: Iterable[int], dimension: str | None = None) -> pd.DataFrame:
    """Final predictions of these runs joined with the target reviewer's own score (may be NaN)."""
    qs = JudgeFinal.objects.filter(run_id__in=list(run_ids))
    if dimension:
        qs = qs.filter(dimension__key=dimension)
    rows = list(
        qs.values_list(
            "reviewer_id",
            "reviewer__username",
            "idea_id",
            "idea__patent__domain__key",
            "dimension_id",
            "dimension__key",
            "kind",
            "k",
            "score",
            "confidence",
            "reason",
            "kept",
            "discarded",
            "failed",
            "level_score",
            "signal",
        )
    )
    columns = [
        "reviewer_id",
        "reviewer",
        "idea_id",
        "domain",
        "dimension_id",
        "dimension",
        "kind",
        "k",
        "pred",
        "confidence",
        "reason",
        "kept",
        "discarded",
        "failed",
        "base",  # the level-only baseline (engine.level)
        "signal",
    ]
    frame = pd.DataFrame(rows, columns=columns)
    if frame.empty:
        frame["truth"] = pd.Series(dtype=float)
        return frame
    frame["dimension"] = frame["dimension_id"].map(dimension_labels())
    truth = truth_frame(
        reviewer_ids=frame["reviewer_id"].unique(), idea_ids=frame["idea_id"].unique()
    )
    truth = truth.rename(columns={"score": "truth"})[
        ["reviewer_id", "idea_id", "dimension", "truth"]
    ]
    frame = frame.merge(truth, on=["reviewer_id", "idea_id", "dimension"], how="left")
    frame["pred"] = frame["pred"].astype(float)
    frame["base"] = frame["base"].astype(float)
    return frame


def truth_frame(
    *,
    reviewer_ids: Iterable[int] | None = None,
    idea_ids: Iterable[int] | None = None,
    domain: Domain | None = None,
) -> pd.DataFrame:
    qs = Rating.objects.filter(status=Rating.Status.SCORED)
    if reviewer_ids is not None:
        qs = qs.filter(reviewer_id__in=[int(r) for r in reviewer_ids])
    if idea_ids is not None:
        qs = qs.filter(idea_id__in=[int(i) for i in idea_ids])
    if domain is not None:
        qs = qs.filter(idea__patent__domain=domain)
    rows = qs.values_list("reviewer_id", "reviewer__username", "idea_id", "dimension_id", "score")
    frame = pd.DataFrame(
        list(rows), columns=["reviewer_id", "reviewer", "idea_id", "dimension", "score"]
    )
    frame["dimension"] = frame["dimension"].map(dimension_labels())
    frame["score"] = frame["score"].astype(float)
    return frame


def predictions_frame(*, run_ids: Iterable[int]) -> pd.DataFrame:
    """One row per seed prediction: was it scored, was it discarded (its config's threshold),
    which model and response mode produced it."""
    rows = (
        JudgePrediction.objects.filter(run_id__in=list(run_ids))
        .values_list(
            "reviewer_id",
            "idea_id",
            "idea__patent__domain__key",
            "dimension_id",
            "kind",
            "k",
            "score",
            "confidence",
            "config__confidence_threshold",
            "backend",
            "model",
            "response_mode",
        )
        .iterator(chunk_size=PREDICTION_CHUNK)
    )
    # A chunk of tuples at a time: every row's tuple at once, beside the frame made of them,
    # was most of the alignment's 1.5 GB peak at 2.7 million predictions (bench_scale, 30x).
    parts = []
    while chunk := list(itertools.islice(rows, PREDICTION_CHUNK)):
        part = pd.DataFrame(chunk, columns=PREDICTION_COLUMNS)
        for column in ("domain", "kind", "backend", "model", "response_mode"):
            # One string object per distinct value (a few), not one per row.
            part[column] = part[column].astype("category").astype(part[column].dtype)
        parts.append(part)
    frame = (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame([], columns=PREDICTION_COLUMNS)
    )
    if frame.empty:
        return frame.assign(scored=pd.Series(dtype=bool), discarded=pd.Series(dtype=bool))
    frame["dimension"] = frame["dimension"].map(dimension_labels())
    threshold = frame["threshold"].fillna(80)
    frame["scored"] = frame["score"].notna()
    frame["discarded"] = frame["scored"] & (frame["confidence"].fillna(-1) < threshold)
    return frame


PREDICTION_CHUNK = 100_000
PREDICTION_COLUMNS = [
    "reviewer_id",
    "idea_id",
    "domain",
    "dimension",
    "kind",
    "k",
    "score",
    "confidence",
    "threshold",
    "backend",
    "model",
    "response_mode",
]


def unrated_predictions(
    *, reviewer_id: int | None = None, domain: Domain | None = None, dimension: str | None = None
) -> QuerySet[JudgeFinal]:
    """Latest prediction-run finals per reviewer (ideas they have not rated)."""
    run_ids = latest_done_runs(
        purpose=JudgeRun.Purpose.PREDICTION, domain=domain, reviewer_id=reviewer_id
    )
    qs = JudgeFinal.objects.filter(run_id__in=run_ids).select_related(
        "reviewer", "idea", "idea__patent", "dimension", "run"
    )
    if dimension:
        qs = qs.filter(dimension__key=dimension)
    # Targets where no seed kept a prediction have no score; they go last, not first.
    return qs.order_by(
        "reviewer__username",
        "dimension__position",
        F("score").desc(nulls_last=True),
        F("confidence").desc(nulls_last=True),
        "idea__external_id",
    )


ALL_DIMENSIONS = "*"


def shortlist_for(
    *,
    reviewer_id: int | None = None,
    domain: Domain | None = None,
    dimension: str | None = None,
) -> QuerySet[JudgeShortlist]:
    """The stored shortlists of the latest finished prediction runs (one per reviewer, domain
    and dimension set): the top JUDGE_SHORTLIST_SIZE unread ideas per reviewer, ranked.

    The read other apps use (Decide, findings): nothing is ranked here. ``dimension``: None =
    every list, a dimension key = that dimension's list, ALL_DIMENSIONS = the list over all
    dimensions (its predicted_score is the mean position on the scales, 0 to 1). Rows come
    ordered by reviewer, domain, list, rank, with reviewer, domain, dimension and idea loaded.
    """
    run_ids = latest_done_runs(
        purpose=JudgeRun.Purpose.PREDICTION, domain=domain, reviewer_id=reviewer_id
    )
    qs = JudgeShortlist.objects.filter(run_id__in=run_ids).select_related(
        "reviewer", "domain", "dimension", "idea"
    )
    if dimension == ALL_DIMENSIONS:
        qs = qs.filter(dimension__isnull=True)
    elif dimension:
        qs = qs.filter(dimension__key=dimension)
    return qs.order_by(
        "reviewer__username",
        "domain__key",
        F("dimension__position").asc(nulls_first=True),
        "rank",
    )


def panel_shortlist_for(
    *, domain: Domain | None = None, dimension: str | None = None
) -> QuerySet[PanelShortlist]:
    """The stored panel shortlists (services.shortlists.panel_shortlist_store): per domain, the
    ideas most of its reviewers have not read, by the mean of their judges' predictions.
    Managers only: it averages every reviewer's predictions. ``dimension`` as in
    ``shortlist_for``. Ordered by domain, list, rank, with domain, dimension and idea loaded."""
    qs = PanelShortlist.objects.select_related("domain", "dimension", "idea")
    if domain is not None:
        qs = qs.filter(domain=domain)
    if dimension == ALL_DIMENSIONS:
        qs = qs.filter(dimension__isnull=True)
    elif dimension:
        qs = qs.filter(dimension__key=dimension)
    return qs.order_by("domain__key", F("dimension__position").asc(nulls_first=True), "rank")


def shortlisted_keys(*, run_ids: Iterable[int]) -> set[tuple[int, int, int]]:
    """(run, dimension, idea) of every per-dimension shortlist entry of these runs."""
    return set(
        JudgeShortlist.objects.filter(
            run_id__in=list(run_ids), dimension__isnull=False
        ).values_list("run_id", "dimension_id", "idea_id")
    )


def case_finals(*, idea_id: int) -> QuerySet[JudgeFinal]:
    """Every final judgement of one idea from the latest evaluation/prediction/study runs."""
    return (
        JudgeFinal.objects.filter(idea_id=idea_id, run__status=JudgeRun.Status.DONE)
        .select_related("reviewer", "dimension", "run")
        .order_by("dimension__position", "reviewer__username", "kind", "-k", "-run_id")
    )


def reviewers_with_finals() -> QuerySet[User]:
    return User.objects.filter(Q(id__in=JudgeFinal.objects.values("reviewer_id"))).order_by(
        "username"
    )
