"""Reads of judge predictions: finals and truth frames, a reviewer's unrated predictions and
shortlists, the finals of a case."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterable

import numpy as np
import pandas as pd
from django.db import connection, transaction
from django.db.models import Count, F, Q, QuerySet
from django.db.models.functions import Coalesce

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.judges.models import (
    JudgeConfig,
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
    """Final predictions of these runs joined with the target reviewer's own score (may be NaN).

    Without their reasons (final_reasons, for the few rows that need them): at a million finals
    the reasons were two thirds of the frame."""
    qs = JudgeFinal.objects.filter(run_id__in=list(run_ids))
    if dimension:
        qs = qs.filter(dimension__key=dimension)
    frame = _final_values(qs)
    if frame.empty:
        return pd.DataFrame([], columns=[*_FINAL_COLUMNS, "truth"]).astype({"truth": float})
    # Names from the few rows they name (one string object per distinct value), not a join.
    usernames = dict(
        User.objects.filter(id__in=frame["reviewer_id"].unique().tolist()).values_list(
            "id", "username"
        )
    )
    domain_keys = dict(Domain.objects.values_list("id", "key"))
    frame.insert(1, "reviewer", frame["reviewer_id"].map(usernames).astype(object))
    frame.insert(3, "domain", frame.pop("domain_id").map(domain_keys).astype(object))
    frame.insert(5, "dimension", frame["dimension_id"].map(dimension_labels()))
    for column in ("kind", "signal"):
        frame[column] = frame[column].astype(object)
    key = ["reviewer_id", "idea_id", "dimension"]
    truth = truth_frame(
        reviewer_ids=frame["reviewer_id"].unique(), idea_ids=frame["idea_id"].unique()
    ).set_index(key)["score"]
    # A column looked up, not a merge: a merge copies the whole frame. One rating per reviewer,
    # idea and dimension, so each final finds at most one.
    frame["truth"] = truth.reindex(pd.MultiIndex.from_frame(frame[key])).to_numpy()
    frame["pred"] = frame["pred"].astype(float)
    frame["base"] = frame["base"].astype(float)
    return frame


# What finals_frame reads of each final, in its columns' order; the names come after.
_FINAL_VALUES = {
    "reviewer_id": "reviewer_id",
    "idea_id": "idea_id",
    "domain_id": "idea__patent__domain_id",
    "dimension_id": "dimension_id",
    "kind": "kind",
    "k": "k",
    "pred": "score",
    "confidence": "confidence",
    "final_id": "id",
    "kept": "kept",
    "discarded": "discarded",
    "failed": "failed",
    "base": "level_score",  # the level-only baseline (engine.level)
    "signal": "signal",
}


def _final_values(qs: QuerySet[JudgeFinal]) -> pd.DataFrame:
    """The _FINAL_VALUES of these finals as a frame. On PostgreSQL one COPY read by pandas'
    CSV parser (at 1M ratings, 3.4 million finals: row tuples built and dropped a chunk at a
    time took 18 s and left some 300 MB of freed objects the process kept); elsewhere (SQLite)
    row tuples a chunk at a time."""
    # In the order they were stored: a reviewer's rows come in the same order in every scope and
    # every time (unordered, a parallel scan returned them shuffled), so the rows_hash of a
    # section (selectors.reports) finds it again.
    rows = qs.order_by("id").values_list(*_FINAL_VALUES.values())
    names = list(_FINAL_VALUES)
    categorical = {"kind": "category", "signal": "category"}
    if connection.vendor == "postgresql":
        sql, params = rows.query.sql_with_params()
        with tempfile.TemporaryFile() as spool, connection.cursor() as cur:
            with cur.cursor.copy(f"COPY ({sql}) TO STDOUT (FORMAT csv)", params) as copy:
                for block in copy:
                    spool.write(block)
            if not spool.tell():
                return pd.DataFrame([], columns=names)
            spool.seek(0)
            # A blank signal is "", not missing: only the nullable numbers read "" as NaN.
            return pd.read_csv(
                spool,
                header=None,
                names=names,
                dtype=categorical,
                keep_default_na=False,
                na_values={column: [""] for column in ("pred", "confidence", "base")},
            )
    parts = []
    chunks = rows.iterator(chunk_size=_FINALS_CHUNK)
    while chunk := list(itertools.islice(chunks, _FINALS_CHUNK)):
        parts.append(pd.DataFrame(chunk, columns=names).astype(categorical))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame([], columns=names)


def final_reasons(
    *, run_ids: Iterable[int], final_ids: Iterable[int], kind: str | None = None
) -> list[str]:
    """The reasons of these finals of these runs (all of judge kind `kind`, if given: the pass
    reads that kind's rows only), in the order given: one streamed pass over the runs' finals
    (hundreds of thousands of ids, at a thousand reviewers, are no query's list). Each
    distinct id is found by binary search, not kept in a set and a dict: at 1M ratings those
    were a third of the reasons' memory."""
    ids, at = np.unique(np.fromiter(final_ids, dtype=np.int64), return_inverse=True)
    if not len(ids):
        return []
    qs = JudgeFinal.objects.filter(run_id__in=list(run_ids), id__range=(int(ids[0]), int(ids[-1])))
    if kind is not None:
        qs = qs.filter(kind=kind)
    rows = qs.values_list("id", "reason").iterator(chunk_size=_FINALS_CHUNK)
    found = np.full(len(ids), None, dtype=object)
    while chunk := list(itertools.islice(rows, _FINALS_CHUNK)):
        chunk_ids = np.fromiter((row[0] for row in chunk), dtype=np.int64, count=len(chunk))
        pos = np.minimum(np.searchsorted(ids, chunk_ids), len(ids) - 1)
        hit = np.flatnonzero(ids[pos] == chunk_ids)
        found[pos[hit]] = [chunk[i][1] for i in hit.tolist()]
    missing = np.flatnonzero(found == None)  # noqa: E711 (elementwise)
    if len(missing):
        raise KeyError(int(ids[missing[0]]))
    return found[at].tolist()


_FINALS_CHUNK = 100_000
_FINAL_COLUMNS = [
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
    "final_id",
    "kept",
    "discarded",
    "failed",
    "base",  # the level-only baseline (engine.level)
    "signal",
]


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
    rows = qs.values_list("reviewer_id", "idea_id", "dimension_id", "score")
    frame = pd.DataFrame(list(rows), columns=["reviewer_id", "idea_id", "dimension", "score"])
    # Names from the few reviewers the rows name, not a join: planned on a users table whose
    # statistics predate an import, the join was a nested loop over every user (0.7 s for one
    # domain's ratings at a million; apps.core.table_statistics).
    usernames = dict(
        User.objects.filter(id__in=frame["reviewer_id"].unique().tolist()).values_list(
            "id", "username"
        )
    )
    frame.insert(1, "reviewer", frame["reviewer_id"].map(usernames).astype(object))
    frame["dimension"] = frame["dimension"].map(dimension_labels())
    frame["score"] = frame["score"].astype(float)
    return frame


def prediction_counts(*, run_ids: Iterable[int]) -> pd.DataFrame:
    """The seed predictions of these runs counted by domain, dimension, kind, backend, model and
    response mode: `n`, `n_scored` (the call gave a score) and `n_discarded` (scored, but its
    confidence, missing counting as below, is under its configuration's threshold).

    PostgreSQL counts them: a scope at a thousand reviewers holds millions of seed predictions,
    and a frame of every one was most of the alignment job's time and memory (bench_scale)."""
    rows = (
        JudgePrediction.objects.filter(run_id__in=list(run_ids))
        .alias(
            known_confidence=Coalesce("confidence", -1),
            threshold=Coalesce("config__confidence_threshold", _DEFAULT_THRESHOLD),
        )
        .values(
            "dimension_id",
            "kind",
            "backend",
            "model",
            "response_mode",
            domain=F("idea__patent__domain__key"),
        )
        .annotate(
            n=Count("pk"),
            n_scored=Count("score"),
            n_discarded=Count(
                "pk", filter=Q(score__isnull=False, known_confidence__lt=F("threshold"))
            ),
        )
        .order_by()
    )
    frame = pd.DataFrame(list(rows), columns=_COUNT_COLUMNS)
    frame["dimension"] = frame["dimension_id"].map(dimension_labels())
    return frame


def coverage_counts(*, run_ids: Iterable[int]) -> pd.DataFrame:
    """The seed predictions of these (finished) runs that the reviewer's own scored rating
    answers (same reviewer, idea and dimension), counted by kind, k, threshold (their
    configuration's), confidence (missing when the call gave no score) and correct (the score
    equals the reviewer's own): the coverage-accuracy curves (engine.alignment), counted in the
    database for the reason prediction_counts gives."""
    run_ids = list(run_ids)
    predictions_sql, predictions_params = (
        JudgePrediction.objects.filter(run_id__in=run_ids)
        .values(
            p_reviewer=F("reviewer_id"),
            p_idea=F("idea_id"),
            p_dimension=F("dimension_id"),
            p_kind=F("kind"),
            p_k=F("k"),
            p_score=F("score"),
            p_confidence=F("confidence"),
            p_threshold=F("config__confidence_threshold"),
        )
        .query.sql_with_params()
    )
    truth = Rating.objects.filter(status=Rating.Status.SCORED)
    reviewers = set(JudgeRun.objects.filter(id__in=run_ids).values_list("reviewer_id", flat=True))
    if reviewers and None not in reviewers:
        # Runs of one reviewer each (evaluations): their ratings only, not every rating hashed
        # for each domain's scope (0.5 s of its 2 s at 1M ratings).
        truth = truth.filter(reviewer_id__in=sorted(reviewers))
    truth_sql, truth_params = truth.values(
        t_reviewer=F("reviewer_id"),
        t_idea=F("idea_id"),
        t_dimension=F("dimension_id"),
        t_score=F("score"),
    ).query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cur:
        postgresql = connection.vendor == "postgresql"
        if postgresql:
            # One pass over each side, hashed: where the tables' statistics are missing or
            # stale (autovacuum off, a bulk load just done) the planner otherwise probes the
            # predictions' indexes once per rating, 40 s instead of 0.3 s at 30,000 ratings
            # (bench_scale). For this query only: the caller's transaction may go on (a failed
            # query's rollback to this block's savepoint undoes the setting).
            cur.execute("SET LOCAL enable_nestloop = off")
        cur.execute(
            f"""
            SELECT p_kind, p_k, p_threshold,
                   CASE WHEN p_score IS NULL THEN NULL ELSE p_confidence END,
                   CASE WHEN p_score = t_score THEN 1 ELSE 0 END,
                   count(*)
            FROM ({predictions_sql}) AS p
            JOIN ({truth_sql}) AS t
              ON t_reviewer = p_reviewer AND t_idea = p_idea AND t_dimension = p_dimension
            GROUP BY 1, 2, 3, 4, 5
            """,
            [*predictions_params, *truth_params],
        )
        rows = cur.fetchall()
        if postgresql:
            cur.execute("SET LOCAL enable_nestloop = DEFAULT")
    frame = pd.DataFrame(rows, columns=["kind", "k", "threshold", "confidence", "correct", "n"])
    return frame.astype({"k": int, "confidence": float, "correct": bool, "n": int})


_COUNT_COLUMNS = [
    "dimension_id",
    "kind",
    "backend",
    "model",
    "response_mode",
    "domain",
    "n",
    "n_scored",
    "n_discarded",
]
# A prediction whose configuration is gone is held to the threshold a new configuration gets.
_DEFAULT_THRESHOLD = JudgeConfig._meta.get_field("confidence_threshold").default


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
