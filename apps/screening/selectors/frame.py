"""The rating frame: every stored rating as one row of a pandas frame, with its labels, and the
rubric facts the analyses read beside it (scales, category levels, dimension names) and the
idea catalogue. Screening owns the ratings; the metrics (apps/disagreement), the decision model
(apps/decisions) and the findings read them through here (docs/metrics.md has the columns).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import psycopg
from django.db import connection
from django.db.models import BigIntegerField, F, Func, QuerySet
from django.db.models.functions import Cast
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.screening.models import Dimension, Rating

# Characters of the description shown for an idea that has no title.
EXCERPT_CHARS = 90


def idea_label(title: str | None, description: str | None, external_id: str) -> str:
    """What the dashboards call an idea: its title, else the start of its description, else
    its external id (ideas imported without a natural title)."""
    stripped = title.strip() if title else ""
    if stripped:
        return stripped
    text = " ".join((description or "").split())
    if text:
        return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1].rstrip() + "…"
    return external_id


FRAME_COLUMNS = [
    "idea_id",
    "idea",
    "title",
    "patent_id",
    "domain",
    "reviewer_id",
    "reviewer",
    "background",
    "dimension",
    "score",
    "status",
    "rated_at",
]


def _as_datetime(value: dt.date | dt.datetime, *, end: bool = False) -> dt.datetime:
    """Dates are whole days in UTC; an `until` date includes that day."""
    if isinstance(value, dt.datetime):
        return value if timezone.is_aware(value) else timezone.make_aware(value, dt.UTC)
    moment = dt.datetime.combine(value, dt.time.min, tzinfo=dt.UTC)
    return moment + dt.timedelta(days=1) if end else moment


def ratings_queryset(
    *,
    domain: str | None = None,
    dimension: str | None = None,
    background: str | None = None,
    since: dt.date | dt.datetime | None = None,
    until: dt.date | dt.datetime | None = None,
):
    qs = Rating.objects.all()
    if domain:
        qs = qs.filter(idea__patent__domain__key=domain)
    if dimension:
        qs = qs.filter(dimension__key=dimension)
    if background:
        qs = qs.filter(reviewer__reviewer_profile__background=background)
    # Dates select ratings by when they were made (created_at, which an import sets from its
    # file), not by when the row last changed: an import touches every row's updated_at.
    if since is not None:
        qs = qs.filter(created_at__gte=_as_datetime(since))
    if until is not None:
        qs = qs.filter(created_at__lt=_as_datetime(until, end=True))
    return qs


def rating_frame(
    *,
    domain: str | None = None,
    dimension: str | None = None,
    background: str | None = None,
    since: dt.date | dt.datetime | None = None,
    until: dt.date | dt.datetime | None = None,
    columns: Sequence[str] = FRAME_COLUMNS,
) -> pd.DataFrame:
    """Every stored rating as one row of the analysis frame (see docs/metrics.md); ``columns``:
    only these of FRAME_COLUMNS, in that order (the ideas are not looked up when none of their
    labels is asked for: the decision board takes them from the catalogue).

    Gated-out and declined ratings keep their row with score NaN: they are missing values, never
    zeros. The ratings table is read with one narrow values_list query of ids and numbers
    (joined server-side on PostgreSQL, see _rating_columns); the labels
    (idea, domain, reviewer, background, dimension) come from three small lookup queries and are
    attached with vectorised takes. At a million ratings this is several times faster than one
    wide join, which would make Python build a million copies of every label string.
    """
    qs = ratings_queryset(
        domain=domain, dimension=dimension, background=background, since=since, until=until
    )
    unknown = sorted(set(columns) - set(FRAME_COLUMNS))
    if unknown:
        raise ValueError(f"Not columns of the rating frame: {', '.join(unknown)}.")
    read = _rating_columns(qs)
    n = len(read["idea_id"])
    if n == 0:
        frame = pd.DataFrame({c: pd.Series(dtype=object) for c in FRAME_COLUMNS})
        frame["idea_id"] = frame["idea_id"].astype("int64")
        frame["patent_id"] = frame["patent_id"].astype("int64")
        frame["reviewer_id"] = frame["reviewer_id"].astype("int64")
        frame["score"] = frame["score"].astype(float)
        frame["rated_at"] = pd.to_datetime(frame["rated_at"], utc=True)
        return frame[list(columns)]
    idea_ids_arr = read["idea_id"]
    reviewer_ids_arr = read["reviewer_id"]
    dimension_ids_arr = read["dimension_id"]
    scores, statuses, stamps = read["score"], read["status"], read["ts"]
    values: dict[str, Any] = {
        "idea_id": idea_ids_arr,
        "reviewer_id": reviewer_ids_arr,
        # None (gated, declined) becomes NaN here: missing, not zero.
        "score": scores,
        "status": statuses,
    }
    wanted = set(columns)
    if "dimension" in wanted:
        dims = pd.Series(dict(Dimension.objects.values_list("id", "key")), dtype=object)
        values["dimension"] = dims.reindex(dimension_ids_arr).to_numpy(dtype=object)
    if "rated_at" in wanted:
        values["rated_at"] = _utc_stamps(stamps)
    if wanted & {"idea", "title", "patent_id", "domain"}:
        values.update(_idea_labels(idea_ids_arr))
    if wanted & {"reviewer", "background"}:
        values.update(_reviewer_labels(reviewer_ids_arr))
    return pd.DataFrame({c: values[c] for c in columns})


def _idea_labels(idea_ids_arr: np.ndarray) -> dict[str, np.ndarray]:
    """Each rating's idea columns (idea, title, patent_id, domain), by a lookup of its ideas."""
    # The labels from the fetched tuples: iterating the frame's columns instead cost a pandas
    # call per value (0.3 s of CPU for 55,000 ideas).
    ideas = pd.DataFrame.from_records(
        [
            (i, e, patent, dom, idea_label(t, d, e))
            for i, e, patent, dom, t, d in _with_ids(Idea.objects.all(), idea_ids_arr)
            .values_list(
                "id", "external_id", "patent_id", "patent__domain__key", "title", "description"
            )
            .order_by()
        ],
        columns=["id", "idea", "patent_id", "domain", "title"],
    ).set_index("id")
    idea_pos = ideas.index.get_indexer(idea_ids_arr)
    return {
        "idea": ideas["idea"].to_numpy(dtype=object)[idea_pos],
        "title": ideas["title"].to_numpy(dtype=object)[idea_pos],
        "patent_id": ideas["patent_id"].to_numpy(dtype=np.int64)[idea_pos],
        "domain": ideas["domain"].to_numpy(dtype=object)[idea_pos],
    }


def _reviewer_labels(reviewer_ids_arr: np.ndarray) -> dict[str, np.ndarray]:
    """Each rating's reviewer columns (reviewer, background), by a lookup of its reviewers."""
    users = pd.DataFrame.from_records(
        list(
            _with_ids(User.objects.all(), reviewer_ids_arr)
            .values_list("id", "username", "reviewer_profile__background")
            .order_by()
        ),
        columns=["id", "reviewer", "background"],
    ).set_index("id")
    users["background"] = users["background"].fillna("")
    user_pos = users.index.get_indexer(reviewer_ids_arr)
    return {
        "reviewer": users["reviewer"].to_numpy(dtype=object)[user_pos],
        "background": users["background"].to_numpy(dtype=object)[user_pos],
    }


def _with_ids(qs: QuerySet, ids: np.ndarray) -> QuerySet:
    """The rows of ``qs`` with these ids, and perhaps others (callers look their ids up).

    Where the ids fill at least half of their range (every rating of an organisation names
    most of its ideas), a range: an IN list of 55,000 ids cost half a second of CPU to build
    and send; the rows it adds are at most as many as those asked for."""
    unique = np.unique(ids)
    if len(unique) > 1000 and int(unique[-1]) - int(unique[0]) + 1 <= 2 * len(unique):
        return qs.filter(id__gte=int(unique[0]), id__lte=int(unique[-1]))
    return qs.filter(id__in=unique.tolist())


_RAW_COLUMNS = ["idea_id", "reviewer_id", "dimension_id", "status", "score", "ts"]


def _utc_stamps(micros: np.ndarray) -> pd.DatetimeIndex:
    """Microseconds since the epoch (``ts``) as UTC times (nanosecond unit, as before): exact,
    where float seconds lost the last microsecond, and a cast rather than a conversion of
    each value (0.08 s at a million ratings)."""
    return pd.DatetimeIndex(micros.astype("datetime64[us]")).as_unit("ns").tz_localize("UTC")


# One rating as _rating_columns reads it: each column's binary send form (big-endian), one
# after the other; every field is fixed-size and never NULL there, so the rows are too.
_PACKED_ROW = np.dtype(
    [
        ("idea_id", ">i8"),
        ("reviewer_id", ">i8"),
        ("dimension_id", ">i8"),
        ("status", ">i2"),
        ("score", ">f8"),
        ("ts", ">i8"),
    ]
)
_STATUSES = np.array([str(value) for value in Rating.Status.values], dtype=object)


def _rating_columns(qs) -> dict[str, np.ndarray]:
    """The narrow rating columns as numpy arrays, from one values_list query.

    On PostgreSQL the rows come back as one bytea value: each rating's fields in their binary
    send form (the status as its position among the choices, a missing score as NaN), which
    numpy reads as one record array. At a million ratings a CSV text parsed by pandas took
    0.4 s of CPU, this a few hundredths (a COPY would send a message per row, and reading a
    million of them costs seconds). A status outside the model's choices (written around the
    model) is read the portable way. ``ts``: the rating's last change, in microseconds since
    the epoch.
    """
    if connection.vendor != "postgresql":
        return _rating_columns_portable(qs)
    values = (
        qs.annotate(
            # Microseconds since the epoch: EXTRACT gives an exact numeric (PostgreSQL 14+).
            ts=Cast(
                Func(F("updated_at"), template="EXTRACT(EPOCH FROM %(expressions)s) * 1000000"),
                BigIntegerField(),
            )
        )
        .values_list(*_RAW_COLUMNS)
        .order_by()
    )
    sql, params = values.query.sql_with_params()
    status = " ".join(f"WHEN '{value}' THEN {j}" for j, value in enumerate(_STATUSES))
    packed = (
        "int8send(t.idea_id::int8) || int8send(t.reviewer_id::int8) || "
        f"int8send(t.dimension_id::int8) || int2send((CASE t.status {status} ELSE -1 END)::int2)"
        " || float8send(coalesce(t.score::float8, 'NaN')) || int8send(t.ts::int8)"
    )
    connection.ensure_connection()
    # A server-side-binding cursor of the same connection (and transaction): Django's own is
    # client-side, which cannot take a binary result, and hex text doubled what was sent.
    with psycopg.Cursor(connection.connection) as cur:
        cur.execute(
            f"SELECT string_agg({packed}, ''::bytea) FROM ({sql}) AS t({', '.join(_RAW_COLUMNS)})",
            params,
            binary=True,
        )
        row = cur.fetchone()
    data = (row[0] if row else None) or b""
    if len(data) % _PACKED_ROW.itemsize:
        raise RuntimeError("The ratings' packed rows do not have the size asked for.")
    rows = np.frombuffer(data, dtype=_PACKED_ROW)
    if (rows["status"] < 0).any():
        return _rating_columns_portable(qs)
    return {
        "idea_id": rows["idea_id"].astype(np.int64),
        "reviewer_id": rows["reviewer_id"].astype(np.int64),
        "dimension_id": rows["dimension_id"].astype(np.int64),
        "status": _STATUSES[rows["status"]],
        "score": rows["score"].astype(float),
        "ts": rows["ts"].astype(np.int64),
    }


def _rating_columns_portable(qs) -> dict[str, np.ndarray]:
    """The same columns on other databases (the local SQLite setup): plain tuples."""
    values = qs.values_list(*_RAW_COLUMNS[:-1], "updated_at").order_by()
    rows = list(values)
    if not rows:
        return {c: np.array([]) for c in _RAW_COLUMNS}
    idea, reviewer, dimension, status, score, ts = zip(*rows, strict=True)
    return {
        "idea_id": np.array(idea, dtype=np.int64),
        "reviewer_id": np.array(reviewer, dtype=np.int64),
        "dimension_id": np.array(dimension, dtype=np.int64),
        "status": np.array(status, dtype=object),
        # None (gated, declined) becomes NaN: missing, not zero.
        "score": np.array(score, dtype=float),
        "ts": pd.to_datetime(list(ts), utc=True).as_unit("us").asi8,
    }


def rubric_scales() -> dict[str, tuple[int, int]]:
    """Dimension key -> (min, max). A key shared by several rubrics gets the widest range."""
    scales: dict[str, tuple[int, int]] = {}
    for key, lo, hi in Dimension.objects.values_list("key", "scale_min", "scale_max"):
        if key in scales:
            lo, hi = min(lo, scales[key][0]), max(hi, scales[key][1])
        scales[key] = (lo, hi)
    return scales


def rubric_categories() -> dict[str, list[int]]:
    """Dimension key -> its category levels (PBIG: need_validity and market_size -> [0])."""
    out: dict[str, set[int]] = {}
    for key, levels in Dimension.objects.values_list("key", "categories"):
        if levels:
            out.setdefault(key, set()).update(int(v) for v in levels)
    return {k: sorted(v) for k, v in out.items()}


def idea_catalog() -> pd.DataFrame:
    """Every idea (id, external id, display title, domain key): what the decision board lists."""
    rows = Idea.objects.values_list(
        "id", "external_id", "title", "description", "patent__domain__key"
    ).order_by("patent__domain__key", "external_id")
    return pd.DataFrame(
        [(i, e, idea_label(t, d, e), dom) for i, e, t, d, dom in rows],
        columns=["idea_id", "idea", "title", "domain"],
    )


def dimension_labels() -> dict[str, str]:
    """Dimension key -> display name, in rubric order (default rubric first)."""
    rows = Dimension.objects.order_by("-rubric__is_default", "rubric_id", "position").values_list(
        "key", "name"
    )
    labels: dict[str, str] = {}
    for key, name in rows:
        labels.setdefault(key, name)
    return labels
