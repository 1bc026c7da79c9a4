"""Ratings in long format: one row per (idea, reviewer, dimension) with a score.

Each (reviewer, idea) pair in the file is one complete screening, checked against the gates of the
idea's rubric exactly as the form is: an open dimension must be scored, a closed one must be empty
(or absent: absent closed dimensions are stored as not rated by design). Every dimension of the
rubric ends up with one Rating row per pair, as `rating_submit` would leave it.

Validation is vectorised: the gates are evaluated column by column over a (pairs x dimensions)
score matrix, and only the failing pairs go through `gates.validate_scores` to word the errors.
Writes go through COPY and set-based SQL on PostgreSQL, and through the ORM's bulk operations
elsewhere (SQLite for the local demo).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd
from django.db import connection
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.importers import ImportResult
from apps.catalog.importers.common import (
    INTEGER,
    ROW,
    Problems,
    check_columns,
    chunked,
    read_table,
    require_values,
)
from apps.catalog.models import Idea
from apps.screening.gates import DimensionRule, validate_scores
from apps.screening.models import Assignment, Dimension, Rating, RatingHistory, Rubric
from apps.screening.services.ratings import ratings_changed

REQUIRED = ["idea", "reviewer", "dimension", "score"]
OPTIONAL = ["rationale", "created_at"]
SCORED = Rating.Status.SCORED.value
GATED = Rating.Status.NOT_RATED_BY_DESIGN.value
IMPORT = Rating.Source.IMPORT.value

# Force the portable ORM path even on PostgreSQL (tests use it to cover the SQLite code path).
FORCE_PORTABLE = False


def import_ratings(
    *, content: bytes, filename: str, actor: Any = None, dry_run: bool = False
) -> ImportResult:
    frame = read_table(content, filename)
    check_columns(frame, required=REQUIRED, optional=OPTIONAL, kind="ratings")
    problems = Problems()
    has_rationale = "rationale" in frame.columns
    ok = require_values(frame, problems, ["idea", "reviewer", "dimension"])

    # Ideas -> id and rubric.
    default_rubric = Rubric.objects.filter(is_default=True).values_list("id", flat=True).first()
    idea_rows: list[tuple[str, int, int | None]] = []
    for part in chunked([v for v in frame["idea"].unique().tolist() if v], 5000):
        idea_rows.extend(
            Idea.objects.filter(external_id__in=part).values_list(
                "external_id", "id", "patent__domain__rubric_id"
            )
        )
    ideas = pd.DataFrame(idea_rows, columns=["idea", "idea_id", "rubric_id"])
    ideas["rubric_id"] = (
        ideas["rubric_id"].fillna(-1 if default_rubric is None else default_rubric).astype("int64")
    )
    frame = frame.merge(ideas, on="idea", how="left")
    unknown_idea = (frame["idea"] != "") & frame["idea_id"].isna()
    problems.add_rows(
        frame,
        unknown_idea,
        "idea",
        "is not the external_id of a stored idea; import the ideas first",
    )
    no_rubric = frame["rubric_id"] == -1
    problems.add_rows(
        frame, no_rubric, "idea", "has no rubric: its domain has none and no rubric is the default"
    )

    # Reviewers -> id; only reviewer accounts hold ratings.
    user_rows: list[tuple[str, int, str]] = []
    for part in chunked([v for v in frame["reviewer"].unique().tolist() if v], 5000):
        user_rows.extend(
            User.objects.filter(username__in=part).values_list("username", "id", "role")
        )
    users = pd.DataFrame(user_rows, columns=["reviewer", "reviewer_id", "role"])
    frame = frame.merge(users, on="reviewer", how="left")
    unknown_reviewer = (frame["reviewer"] != "") & frame["reviewer_id"].isna()
    problems.add_rows(
        frame,
        unknown_reviewer,
        "reviewer",
        "is not the username of a stored reviewer; import the reviewers first",
    )
    not_reviewer = frame["reviewer_id"].notna() & (frame["role"] != User.Role.REVIEWER)
    problems.add_rows(frame, not_reviewer, "reviewer", "is not a reviewer account")

    # Dimensions of each idea's rubric.
    rubric_ids = sorted(int(r) for r in frame["rubric_id"].dropna().unique() if r != -1)
    dims = list(
        Dimension.objects.filter(rubric_id__in=rubric_ids).order_by("rubric_id", "position")
    )
    dim_frame = pd.DataFrame(
        [(d.rubric_id, d.key, d.id, d.scale_min, d.scale_max) for d in dims],
        columns=["rubric_id", "dimension", "dimension_id", "scale_min", "scale_max"],
    )
    dim_frame["rubric_id"] = dim_frame["rubric_id"].astype("int64")
    frame["rubric_id"] = frame["rubric_id"].astype("float64")
    dim_frame["rubric_id"] = dim_frame["rubric_id"].astype("float64")
    frame = frame.merge(dim_frame, on=["rubric_id", "dimension"], how="left")
    rubric_keys = {r.id: r.key for r in Rubric.objects.filter(id__in=rubric_ids)}
    unknown_dim = (
        frame["idea_id"].notna()
        & ~no_rubric
        & (frame["dimension"] != "")
        & frame["dimension_id"].isna()
    )
    if unknown_dim.any():
        keys_of = {rid: ", ".join(d.key for d in dims if d.rubric_id == rid) for rid in rubric_ids}
        hit = frame.loc[unknown_dim]
        for row, value, rid in zip(
            hit[ROW].tolist(), hit["dimension"].tolist(), hit["rubric_id"].tolist(), strict=True
        ):
            problems.add(
                "dimension",
                f"is not a dimension of rubric {rubric_keys.get(int(rid), rid)} "
                f"(expected one of: {keys_of.get(int(rid), '')})",
                row=int(row),
                value=value,
            )

    # Scores: empty means "not rated by design"; otherwise a whole number on the scale.
    score_text = frame["score"]
    given = score_text != ""
    not_int = given & ~score_text.str.match(INTEGER)
    problems.add_rows(
        frame, not_int, "score", "must be a whole number (or empty when the stage is closed)"
    )
    score = pd.to_numeric(score_text.where(given & ~not_int), errors="coerce")
    frame["score_num"] = score
    off = (
        score.notna()
        & frame["dimension_id"].notna()
        & ((score < frame["scale_min"]) | (score > frame["scale_max"]))
    )
    if off.any():
        hit = frame.loc[off]
        for row, value, lo, hi, dim in zip(
            hit[ROW].tolist(),
            hit["score"].tolist(),
            hit["scale_min"].tolist(),
            hit["scale_max"].tolist(),
            hit["dimension"].tolist(),
            strict=True,
        ):
            problems.add(
                "score",
                f"is off the scale of {dim} ({int(lo)}-{int(hi)})",
                row=int(row),
                value=value,
            )

    if "created_at" in frame.columns:
        stamps = pd.to_datetime(
            frame["created_at"].where(frame["created_at"] != ""),
            errors="coerce",
            utc=True,
            format="ISO8601",
        )
        bad_time = (frame["created_at"] != "") & stamps.isna()
        problems.add_rows(
            frame,
            bad_time,
            "created_at",
            "must be an ISO 8601 date and time, e.g. 2024-05-01T14:30:00Z",
        )
        frame["created_at_ts"] = stamps
    else:
        frame["created_at_ts"] = pd.NaT

    # Duplicate (idea, reviewer, dimension) keys: the file must say one thing per rating.
    dup = frame.duplicated(subset=["idea", "reviewer", "dimension"], keep="first") & ok
    if dup.any():
        first_row = frame.groupby(["idea", "reviewer", "dimension"], sort=False)[ROW].transform(
            "first"
        )
        hit = frame.loc[dup]
        for row, first, idea, reviewer, dim in zip(
            hit[ROW].tolist(),
            first_row[dup].tolist(),
            hit["idea"].tolist(),
            hit["reviewer"].tolist(),
            hit["dimension"].tolist(),
            strict=True,
        ):
            problems.add(
                "dimension",
                f"repeats row {first} for the same idea, reviewer and dimension",
                row=int(row),
                value=f"{idea} / {reviewer} / {dim}",
            )

    row_bad = (
        ~ok
        | unknown_idea
        | no_rubric
        | unknown_reviewer
        | not_reviewer
        | unknown_dim
        | not_int
        | off
        | dup
        | frame["dimension_id"].isna()
    )
    final = _check_gates_and_expand(frame, row_bad, dims, problems)
    problems.raise_if_any("The ratings file has errors.")

    result = ImportResult(kind="ratings", rows=int(len(frame)))
    if final.empty:
        return result
    if connection.vendor == "postgresql" and not FORCE_PORTABLE:
        created, updated, changed_reviewers, assignments = _write_postgres(
            final, actor=actor, has_rationale=has_rationale
        )
    else:
        created, updated, changed_reviewers, assignments = _write_portable(
            final, actor=actor, has_rationale=has_rationale
        )
    result.created, result.updated = created, updated
    result.unchanged = int(len(final)) - created - updated
    gated = int((final["status"] == GATED).sum())
    result.notes.append(
        f"{final[['reviewer_id', 'idea_id']].drop_duplicates().shape[0]} screenings "
        "(reviewer, idea) "
        f"stored as {len(final)} ratings, {gated} of them not rated by design."
    )
    if assignments:
        result.notes.append(f"{assignments} assignments created or marked completed.")
    if changed_reviewers and not dry_run:
        ratings_changed(reviewer_ids=changed_reviewers)
    return result


def _check_gates_and_expand(
    frame: pd.DataFrame, row_bad: pd.Series, dims: list[Dimension], problems: Problems
) -> pd.DataFrame:
    """Check every (reviewer, idea) screening against its rubric's gates and return one row per
    (reviewer, idea, dimension of the rubric) with its status, score, rationale and created_at."""
    frame = frame.assign(_bad=row_bad.to_numpy())
    valid = frame.loc[
        frame["reviewer_id"].notna() & frame["idea_id"].notna() & ~no_rubric_mask(frame)
    ]
    if valid.empty:
        return pd.DataFrame()
    valid = valid.assign(
        reviewer_id=valid["reviewer_id"].astype("int64"),
        idea_id=valid["idea_id"].astype("int64"),
        rubric_id=valid["rubric_id"].astype("int64"),
    )
    # A screening with a bad row cannot be judged against the gates; its row errors say enough.
    group_bad = valid.groupby(["reviewer_id", "idea_id"], sort=False)["_bad"].transform("any")
    valid = valid.loc[~group_bad]
    parts: list[pd.DataFrame] = []
    for rubric_id, block in valid.groupby("rubric_id", sort=False):
        rdims = [d for d in dims if d.rubric_id == rubric_id]
        parts.append(_gate_block(block, rdims, problems))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def no_rubric_mask(frame: pd.DataFrame) -> pd.Series:
    return frame["rubric_id"].isna() | (frame["rubric_id"] == -1)


def _gate_block(block: pd.DataFrame, rdims: list[Dimension], problems: Problems) -> pd.DataFrame:
    rules: list[DimensionRule] = [d.rule() for d in rdims]
    pos = {d.id: j for j, d in enumerate(rdims)}
    pair_key = block["reviewer_id"].to_numpy() * (1 << 32) + block["idea_id"].to_numpy()
    codes, uniques = pd.factorize(pair_key)
    n, m = len(uniques), len(rdims)
    cols = block["dimension_id"].astype("int64").map(pos).to_numpy()
    scores = np.full((n, m), np.nan)
    scores[codes, cols] = block["score_num"].to_numpy(dtype="float64")
    rows = np.zeros((n, m), dtype="int64")
    rows[codes, cols] = block[ROW].to_numpy()

    # Gates, vectorised: a dimension is open when each required one is open and passes.
    index = {r.key: j for j, r in enumerate(rules)}
    is_open = np.zeros((n, m), dtype=bool)
    for j, rule in enumerate(rules):
        col_open = np.ones(n, dtype=bool)
        for req in rule.requires:
            k = index[req]
            s = scores[:, k]
            passes = ~np.isnan(s)
            if rules[k].pass_above is not None:
                passes &= np.nan_to_num(s, nan=-1e9) > rules[k].pass_above
            col_open &= is_open[:, k] & passes
        is_open[:, j] = col_open
    scored = ~np.isnan(scores)
    violating = ((is_open & ~scored) | (~is_open & scored)).any(axis=1)
    if violating.any():
        first_row = np.where(rows > 0, rows, np.iinfo("int64").max).min(axis=1)
        reviewer_of = dict(zip(pair_key, block["reviewer"], strict=False))
        idea_of = dict(zip(pair_key, block["idea"], strict=False))
        for g in np.flatnonzero(violating):
            given = {rules[j].key: int(scores[g, j]) for j in range(m) if scored[g, j]}
            for err in validate_scores(rules, given):
                j = index.get(err.field)
                row = int(rows[g, j]) if j is not None and rows[g, j] else int(first_row[g])
                who = f"{idea_of[uniques[g]]} / {reviewer_of[uniques[g]]}"
                if j is not None and not rows[g, j]:
                    message = f"{err.field} {err.message} for {who}: add a row for it"
                else:
                    message = f"{err.field} {err.message}"
                problems.add(
                    "score", message, row=row, value=err.value if err.value is not None else who
                )

    # One output row per (pair, dimension): scored where open, not rated by design where closed.
    rationale = np.full((n, m), "", dtype=object)
    if "rationale" in block.columns:
        rationale[codes, cols] = block["rationale"].to_numpy(dtype=object)
    created = np.full((n, m), np.datetime64("NaT"), dtype="datetime64[ns]")
    stamps = block["created_at_ts"]
    if stamps.notna().any():
        created[codes, cols] = (
            stamps.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(dtype="datetime64[ns]")
        )
        # Dimensions absent from the file take the screening's earliest given time.
        earliest = np.where(np.isnat(created), np.datetime64("2262-01-01", "ns"), created).min(
            axis=1
        )
        fill = np.broadcast_to(earliest[:, None], (n, m))
        created = np.where(np.isnat(created), fill, created)
        created[created == np.datetime64("2262-01-01", "ns")] = np.datetime64("NaT")
    out = pd.DataFrame(
        {
            "reviewer_id": np.repeat((uniques >> 32).astype("int64"), m),
            "idea_id": np.repeat((uniques & 0xFFFFFFFF).astype("int64"), m),
            "dimension_id": np.tile(np.array([d.id for d in rdims], dtype="int64"), n),
            "status": np.where(is_open, SCORED, GATED).ravel(),
            "score": pd.array(np.where(is_open, scores, np.nan).ravel(), dtype="Float64").astype(
                "Int64"
            ),
            "rationale": np.where(is_open, rationale, "").ravel(),
            "created_at": pd.to_datetime(created.ravel()).tz_localize("UTC"),
        }
    )
    return out


# --- writing -----------------------------------------------------------------------------------


def _write_postgres(
    final: pd.DataFrame, *, actor: Any, has_rationale: bool
) -> tuple[int, int, list[int], int]:
    """COPY the ratings into a temporary table, then upsert with set-based SQL and write one history
    row per created or changed rating in the same statements (data-modifying CTEs)."""
    r = Rating._meta.db_table
    h = RatingHistory._meta.db_table
    a = Assignment._meta.db_table
    actor_id = getattr(actor, "pk", None)
    buf = io.StringIO()
    out = final.copy()
    out["created_at"] = (
        out["created_at"]
        .dt.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")
        .where(out["created_at"].notna(), None)
    )
    if not has_rationale:
        out["rationale"] = None
    out.to_csv(
        buf,
        index=False,
        header=False,
        columns=[
            "reviewer_id",
            "idea_id",
            "dimension_id",
            "status",
            "score",
            "rationale",
            "created_at",
        ],
    )
    force = ", FORCE_NOT_NULL (rationale)" if has_rationale else ""
    connection.ensure_connection()
    with connection.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS pl_import_rating")
        cur.execute(
            "CREATE TEMP TABLE pl_import_rating (reviewer_id bigint NOT NULL, idea_id bigint NOT NULL, "
            "dimension_id bigint NOT NULL, status varchar(16) NOT NULL, score smallint, rationale text, "
            "created_at timestamptz) ON COMMIT DROP"
        )
        raw = cur.cursor
        with raw.copy(
            "COPY pl_import_rating (reviewer_id, idea_id, dimension_id, status, score, rationale, created_at) "
            f"FROM STDIN (FORMAT csv{force})"
        ) as copy:
            data = buf.getvalue()
            step = 8 << 20
            for start in range(0, len(data), step):
                copy.write(data[start : start + step])
        del data, buf
        cur.execute("ANALYZE pl_import_rating")

        # Changed ratings: history (old -> new) and the update, from one snapshot.
        cur.execute(
            f"""
            WITH changed AS (
                SELECT r.id, r.reviewer_id, r.status AS old_status, r.score AS old_score,
                       r.answers AS old_answers, r.rationale AS old_rationale,
                       t.status, t.score, COALESCE(t.rationale, r.rationale) AS rationale,
                       CASE WHEN r.score IS NOT DISTINCT FROM t.score AND r.status = t.status
                            THEN r.answers END AS answers
                FROM pl_import_rating t
                JOIN {r} r ON r.reviewer_id = t.reviewer_id AND r.idea_id = t.idea_id
                          AND r.dimension_id = t.dimension_id
                WHERE r.status <> t.status OR r.score IS DISTINCT FROM t.score
                   OR r.rationale <> COALESCE(t.rationale, r.rationale)
            ), hist AS (
                INSERT INTO {h} (rating_id, changed_by_id, changed_at, source, old_status, old_score,
                                 old_answers, old_rationale, new_status, new_score, new_answers, new_rationale)
                SELECT id, %s::bigint, now(), %s, old_status, old_score, old_answers, old_rationale,
                       status, score, answers, rationale FROM changed
            ), upd AS (
                UPDATE {r} r SET status = c.status, score = c.score, answers = c.answers,
                                 rationale = c.rationale, source = %s, updated_at = now()
                FROM changed c WHERE r.id = c.id
                RETURNING r.reviewer_id
            )
            SELECT reviewer_id, count(*) FROM upd GROUP BY reviewer_id
            """,
            [actor_id, IMPORT, IMPORT],
        )
        upd_rows = cur.fetchall()

        # New ratings: insert and write their creation history in one statement. ON CONFLICT keeps
        # a concurrent import of the same file from failing or duplicating.
        cur.execute(
            f"""
            WITH ins AS (
                INSERT INTO {r} (reviewer_id, idea_id, dimension_id, status, score, answers, rationale,
                                 source, created_at, updated_at)
                SELECT t.reviewer_id, t.idea_id, t.dimension_id, t.status, t.score, NULL,
                       COALESCE(t.rationale, ''), %s, COALESCE(t.created_at, now()), now()
                FROM pl_import_rating t
                WHERE NOT EXISTS (SELECT 1 FROM {r} r WHERE r.reviewer_id = t.reviewer_id
                                  AND r.idea_id = t.idea_id AND r.dimension_id = t.dimension_id)
                ON CONFLICT (reviewer_id, idea_id, dimension_id) DO NOTHING
                RETURNING id, reviewer_id, status, score, rationale
            ), hist AS (
                INSERT INTO {h} (rating_id, changed_by_id, changed_at, source, old_status, old_score,
                                 old_answers, old_rationale, new_status, new_score, new_answers, new_rationale)
                SELECT id, %s::bigint, now(), %s, '', NULL, NULL, '', status, score, NULL, rationale FROM ins
            )
            SELECT reviewer_id, count(*) FROM ins GROUP BY reviewer_id
            """,
            [IMPORT, actor_id, IMPORT],
        )
        ins_rows = cur.fetchall()

        cur.execute(
            f"""
            INSERT INTO {a} (reviewer_id, idea_id, status, assigned_by_id, decline_reason, created_at, updated_at)
            SELECT DISTINCT reviewer_id, idea_id, %s, %s::bigint, '', now(), now() FROM pl_import_rating
            ON CONFLICT (reviewer_id, idea_id) DO UPDATE SET status = EXCLUDED.status, updated_at = now()
            WHERE {a}.status <> EXCLUDED.status
            """,
            [Assignment.Status.COMPLETED.value, actor_id],
        )
        assignments = cur.rowcount
        cur.execute("DROP TABLE IF EXISTS pl_import_rating")
    created = sum(c for _, c in ins_rows)
    updated = sum(c for _, c in upd_rows)
    reviewers = sorted({rid for rid, _ in ins_rows} | {rid for rid, _ in upd_rows})
    return created, updated, reviewers, assignments


def _write_portable(
    final: pd.DataFrame, *, actor: Any, has_rationale: bool
) -> tuple[int, int, list[int], int]:
    """The same writes through the ORM's bulk operations (SQLite, or any other backend)."""
    now = timezone.now()
    existing_rows: list[tuple] = []
    pairs = final[["reviewer_id", "idea_id"]].drop_duplicates()
    for reviewer_id, idea_ids in pairs.groupby("reviewer_id")["idea_id"]:
        for part in chunked(idea_ids.tolist(), 500):
            existing_rows.extend(
                Rating.objects.filter(reviewer_id=int(reviewer_id), idea_id__in=part).values_list(
                    "id",
                    "reviewer_id",
                    "idea_id",
                    "dimension_id",
                    "status",
                    "score",
                    "answers",
                    "rationale",
                )
            )
    old = pd.DataFrame(
        existing_rows,
        columns=[
            "rating_id",
            "reviewer_id",
            "idea_id",
            "dimension_id",
            "old_status",
            "old_score",
            "old_answers",
            "old_rationale",
        ],
    )
    for c in ("rating_id", "reviewer_id", "idea_id", "dimension_id"):
        old[c] = old[c].astype("int64")
    merged = final.merge(old, on=["reviewer_id", "idea_id", "dimension_id"], how="left")
    records = merged.to_dict("records")
    new_ratings: list[Rating] = []
    new_created: list[Any] = []
    changed: list[Rating] = []
    history: list[RatingHistory] = []
    reviewers: set[int] = set()
    for rec in records:
        score = None if pd.isna(rec["score"]) else int(rec["score"])
        stamp = rec["created_at"]
        stamp = None if pd.isna(stamp) else stamp.to_pydatetime()
        if pd.isna(rec["rating_id"]):
            rating = Rating(
                reviewer_id=rec["reviewer_id"],
                idea_id=rec["idea_id"],
                dimension_id=rec["dimension_id"],
                status=rec["status"],
                score=score,
                answers=None,
                rationale=rec["rationale"] or "",
                source=IMPORT,
            )
            new_ratings.append(rating)
            new_created.append(stamp)
            reviewers.add(int(rec["reviewer_id"]))
            continue
        old_score = None if pd.isna(rec["old_score"]) else int(rec["old_score"])
        rationale = rec["rationale"] if has_rationale else rec["old_rationale"]
        if (rec["old_status"], old_score, rec["old_rationale"]) == (
            rec["status"],
            score,
            rationale,
        ):
            continue
        answers = (
            rec["old_answers"] if (old_score, rec["old_status"]) == (score, rec["status"]) else None
        )
        history.append(
            RatingHistory(
                rating_id=int(rec["rating_id"]),
                changed_by=actor,
                source=IMPORT,
                old_status=rec["old_status"],
                old_score=old_score,
                old_answers=rec["old_answers"],
                old_rationale=rec["old_rationale"],
                new_status=rec["status"],
                new_score=score,
                new_answers=answers,
                new_rationale=rationale,
            )
        )
        changed.append(
            Rating(
                id=int(rec["rating_id"]),
                status=rec["status"],
                score=score,
                answers=answers,
                rationale=rationale,
                source=IMPORT,
                updated_at=now,
            )
        )
        reviewers.add(int(rec["reviewer_id"]))
    if changed:
        Rating.objects.bulk_update(
            changed,
            ["status", "score", "answers", "rationale", "source", "updated_at"],
            batch_size=500,
        )
    if new_ratings:
        Rating.objects.bulk_create(new_ratings, batch_size=1000)
        dated = []
        for rating, stamp in zip(new_ratings, new_created, strict=True):
            if stamp is not None:
                rating.created_at = stamp
                dated.append(rating)
            history.append(
                RatingHistory(
                    rating_id=rating.pk,
                    changed_by=actor,
                    source=IMPORT,
                    new_status=rating.status,
                    new_score=rating.score,
                    new_answers=None,
                    new_rationale=rating.rationale,
                )
            )
        if dated:
            Rating.objects.bulk_update(dated, ["created_at"], batch_size=500)
    RatingHistory.objects.bulk_create(history, batch_size=1000)

    assignments = 0
    existing_asg: dict[tuple[int, int], Assignment] = {}
    for reviewer_id, idea_ids in pairs.groupby("reviewer_id")["idea_id"]:
        for part in chunked(idea_ids.tolist(), 500):
            for asg in Assignment.objects.filter(reviewer_id=int(reviewer_id), idea_id__in=part):
                existing_asg[(asg.reviewer_id, asg.idea_id)] = asg
    to_create = []
    to_complete = []
    for reviewer_id, idea_id in pairs.itertuples(index=False):
        asg = existing_asg.get((int(reviewer_id), int(idea_id)))
        if asg is None:
            to_create.append(
                Assignment(
                    reviewer_id=int(reviewer_id),
                    idea_id=int(idea_id),
                    status=Assignment.Status.COMPLETED,
                    assigned_by=actor,
                )
            )
        elif asg.status != Assignment.Status.COMPLETED:
            to_complete.append(asg.pk)
    Assignment.objects.bulk_create(to_create, batch_size=1000, ignore_conflicts=True)
    for part in chunked(to_complete, 500):
        Assignment.objects.filter(pk__in=part).update(
            status=Assignment.Status.COMPLETED, updated_at=now
        )
    assignments = len(to_create) + len(to_complete)
    created = len(new_ratings)
    return created, len(changed), sorted(reviewers), assignments
