"""Ratings in long format: one row per (idea, reviewer, dimension) with a score.

Each (reviewer, idea) pair in the file is one complete screening, checked against the gates of the
idea's rubric exactly as the form is: an open required dimension must be scored, an open optional
one may be left unanswered (row absent or score empty: stored as not answered), a closed one must
be empty (or absent: stored as not rated by design). The optional `status` column states the
stored state and must agree with the gates; `declined` marks a whole screening declined. Every
dimension of the rubric ends up with one Rating row per pair, as `rating_submit` would leave it.

Validation is vectorised: the gates (`gates.open_matrix`, the form's rule over a (pairs x dimensions)
score matrix) decide every pair at once, and only the failing pairs go through
`gates.validate_scores` to word the errors.
Writes go through `ratings_store`, the one storage path of ratings (shared with the form and API).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.dataio.importers import ImportResult
from apps.dataio.importers.common import (
    INTEGER,
    ROW,
    ImportContent,
    Problems,
    check_columns,
    chunked,
    per_distinct,
    read_table,
    require_values,
)
from apps.screening.gates import DimensionRule, open_matrix, status_matrix, validate_scores
from apps.screening.models import Dimension, Rating, Rubric
from apps.screening.services.rating_store import COLUMNS, ratings_store
from apps.screening.services.ratings import ratings_changed

REQUIRED = ["idea", "reviewer", "dimension", "score"]
OPTIONAL = ["rationale", "created_at", "updated_at", "status", "answers"]
SCORED = Rating.Status.SCORED.value
GATED = Rating.Status.NOT_RATED_BY_DESIGN.value
UNANSWERED = Rating.Status.NOT_ANSWERED.value
DECLINED = Rating.Status.DECLINED.value
IMPORT = Rating.Source.IMPORT.value
# The `status` column takes the stored values or their labels, in any case.
STATUS_WORDS = {
    **{c.value: c.value for c in Rating.Status},
    **{str(c.label).lower(): c.value for c in Rating.Status},
}


def import_ratings(
    *, content: ImportContent, filename: str, actor: Any = None, dry_run: bool = False
) -> ImportResult:
    frame = read_table(content, filename)
    check_columns(frame, required=REQUIRED, optional=OPTIONAL, kind="ratings")
    problems = Problems()
    has_rationale = "rationale" in frame.columns
    ok = require_values(frame, problems, ["idea", "reviewer", "dimension"])

    # Ideas -> id and rubric.
    default_rubric = Rubric.objects.filter(is_default=True).values_list("id", flat=True).first()
    ideas = pd.DataFrame(
        _ideas_named([v for v in frame["idea"].unique().tolist() if v]),
        columns=["idea", "idea_id", "domain_key", "rubric_id"],
    )
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
        for row, value, rid, domain in zip(
            hit[ROW].tolist(),
            hit["dimension"].tolist(),
            hit["rubric_id"].tolist(),
            hit["domain_key"].tolist(),
            strict=True,
        ):
            problems.add(
                "dimension",
                f"is not a dimension of rubric {rubric_keys.get(int(rid), rid)}, which rates "
                f"domain {domain} (expected one of: {keys_of.get(int(rid), '')}). If these "
                f"ratings use another rubric, attach it to the domain: list {domain} under "
                f"`domains:` in the rubric file, or run `manage.py import_rubric FILE "
                f"--domain {domain}`",
                row=int(row),
                value=value,
            )

    # Scores: empty means "not rated by design"; otherwise a whole number on the scale.
    score_text = frame["score"]
    given = score_text != ""
    not_int = given & ~per_distinct(score_text, lambda c: c.str.match(INTEGER))
    problems.add_rows(
        frame, not_int, "score", "must be a whole number (or empty when the stage is closed)"
    )
    score = per_distinct(
        score_text.where(given & ~not_int), lambda c: pd.to_numeric(c, errors="coerce")
    )
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

    if "status" in frame.columns:
        frame["status_given"] = frame["status"].str.lower().map(STATUS_WORDS).fillna("")
        bad_status = (frame["status"] != "") & (frame["status_given"] == "")
        problems.add_rows(
            frame,
            bad_status,
            "status",
            "must be one of: " + ", ".join(c.value for c in Rating.Status) + " (or empty)",
        )
        not_scored = (frame["status_given"] != "") & (frame["status_given"] != SCORED)
        problems.add_rows(
            frame,
            not_scored & given,
            "score",
            "must be empty when the status says the dimension was not scored",
        )
        missing_score = (frame["status_given"] == SCORED) & ~given
        problems.add_rows(frame, missing_score, "score", "is required when the status is scored")
        status_bad = bad_status | (not_scored & given) | missing_score
    else:
        frame["status_given"] = ""
        status_bad = pd.Series(False, index=frame.index)

    for col in ("created_at", "updated_at"):
        if col not in frame.columns:
            frame[col + "_ts"] = pd.NaT
            continue
        stamps = pd.to_datetime(
            frame[col].where(frame[col] != ""), errors="coerce", utc=True, format="ISO8601"
        )
        bad_time = (frame[col] != "") & stamps.isna()
        problems.add_rows(
            frame, bad_time, col, "must be an ISO 8601 date and time, e.g. 2024-05-01T14:30:00Z"
        )
        frame[col + "_ts"] = stamps

    frame["answers_obj"] = None
    if "answers" in frame.columns:
        _check_answers(frame, dims, problems)

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
        | status_bad
        | frame["dimension_id"].isna()
    )
    rows_read = int(len(frame))
    screenings = gate_rows(frame, row_bad)
    # From here only `screenings` is read: the parsed file and its lookups go before the gates
    # build their matrices (issue 29: a 98 MB file cost the web process +625 MB).
    del frame, row_bad, score, score_text, given
    final = _check_gates_and_expand(screenings, dims, problems)
    del screenings
    problems.raise_if_any("The ratings file has errors.")

    result = ImportResult(kind="ratings", rows=rows_read)
    if final.empty:
        return result
    if not has_rationale:
        final = final.assign(rationale=None)
    stored = ratings_store(
        rows=final[COLUMNS],
        source=IMPORT,
        changed_by_id=getattr(actor, "pk", None),
        settle_assignments=True,
    )
    assignments = stored.assignments
    result.created, result.updated = stored.created, stored.updated
    result.unchanged = int(len(final)) - stored.created - stored.updated
    counts = final["status"].value_counts()
    result.notes.append(
        f"{final[['reviewer_id', 'idea_id']].drop_duplicates().shape[0]} screenings "
        "(reviewer, idea) "
        f"stored as {len(final)} ratings, {int(counts.get(GATED, 0))} of them not rated by design"
        f", {int(counts.get(UNANSWERED, 0))} not answered, {int(counts.get(DECLINED, 0))} "
        "declined."
    )
    if assignments:
        result.notes.append(f"{assignments} assignments created or updated.")
    if stored.reviewer_ids and not dry_run:
        ratings_changed(reviewer_ids=stored.reviewer_ids)
    return result


def gate_rows(frame: pd.DataFrame, row_bad: pd.Series) -> pd.DataFrame:
    """The rows the gates judge (a known reviewer, idea and rubric) with only the columns they
    read and `_bad` (the row has an error): a copy of part of the frame, so the frame itself can
    be let go."""
    keep = frame["reviewer_id"].notna() & frame["idea_id"].notna() & ~no_rubric_mask(frame)
    return frame.loc[keep, [c for c in GATE_COLUMNS if c in frame.columns]].assign(
        _bad=row_bad[keep].to_numpy()
    )


def _check_gates_and_expand(
    valid: pd.DataFrame, dims: list[Dimension], problems: Problems
) -> pd.DataFrame:
    """Check every (reviewer, idea) screening of `gate_rows` against its rubric's gates and
    return one row per (reviewer, idea, dimension of the rubric) with its status, score,
    rationale and created_at."""
    if valid.empty:
        return pd.DataFrame()
    # `valid` is gate_rows' own copy: its columns are replaced in place, and the rows are
    # copied again only when some must go or several rubrics split them (each copy of a
    # million rows is tens of megabytes of the import's peak).
    for col in ("reviewer_id", "idea_id", "rubric_id"):
        valid[col] = valid[col].astype("int64")
    # A screening with a bad row cannot be judged against the gates; its row errors say enough.
    group_bad = valid.groupby(["reviewer_id", "idea_id"], sort=False)["_bad"].transform("any")
    if group_bad.any():
        valid = valid.loc[~group_bad]
    del group_bad
    rubric_ids = valid["rubric_id"].unique()
    blocks = (
        [(rubric_ids[0], valid)]
        if len(rubric_ids) == 1
        else list(valid.groupby("rubric_id", sort=False))
    )
    parts: list[pd.DataFrame] = []
    for rubric_id, block in blocks:
        rdims = [d for d in dims if d.rubric_id == rubric_id]
        parts.append(_gate_block(block, rdims, problems))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# What _gate_block reads of each row.
GATE_COLUMNS = [
    ROW,
    "reviewer",
    "idea",
    "reviewer_id",
    "idea_id",
    "rubric_id",
    "dimension_id",
    "score_num",
    "status_given",
    "rationale",
    "answers_obj",
    "created_at_ts",
    "updated_at_ts",
]


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

    given_status = np.full((n, m), "", dtype=object)
    given_status[codes, cols] = block["status_given"].to_numpy(dtype=object)
    optional = np.array([r.optional for r in rules], dtype=bool)

    # A declined screening is declined on every dimension: no scores, and no other status.
    declined = (given_status == DECLINED).any(axis=1)
    mixed = declined[:, None] & (rows > 0) & (given_status != DECLINED)
    for g, j in zip(*np.nonzero(mixed), strict=True):
        problems.add(
            "status",
            "must be declined too: this reviewer declined this idea in another row",
            row=int(rows[g, j]),
            value=given_status[g, j] or "(empty)",
        )

    # The gates, vectorised (screening.gates.open_matrix: the form's rule, column by column).
    index = {r.key: j for j, r in enumerate(rules)}
    is_open = open_matrix(rules, scores)
    scored = ~np.isnan(scores)
    status = status_matrix(rules, scores, is_open)
    status[declined, :] = DECLINED
    violating = ((is_open & ~scored & ~optional[None, :]) | (~is_open & scored)).any(
        axis=1
    ) & ~declined
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
    # A stated status must be what the gates make of the scores.
    contradicts = (given_status != "") & (given_status != status) & ~violating[:, None]
    contradicts &= ~declined[:, None]
    for g, j in zip(*np.nonzero(contradicts), strict=True):
        problems.add(
            "status",
            f"says {given_status[g, j]}, but the rubric's gates make {rules[j].key} "
            f"{status[g, j]} for these scores",
            row=int(rows[g, j]),
            value=given_status[g, j],
        )

    # One output row per (pair, dimension): scored where open, not rated by design where closed.
    rationale = np.full((n, m), "", dtype=object)
    if "rationale" in block.columns:
        rationale[codes, cols] = block["rationale"].to_numpy(dtype=object)
    answers = np.full((n, m), None, dtype=object)
    answers[codes, cols] = block["answers_obj"].to_numpy(dtype=object)
    out = pd.DataFrame(
        {
            "reviewer_id": np.repeat((uniques >> 32).astype("int64"), m),
            "idea_id": np.repeat((uniques & 0xFFFFFFFF).astype("int64"), m),
            "dimension_id": np.tile(np.array([d.id for d in rdims], dtype="int64"), n),
            "status": status.ravel(),
            "score": pd.array(
                np.where(status == SCORED, scores, np.nan).ravel(), dtype="Float64"
            ).astype("Int64"),
            # numpy takes None as an object scalar; its where() stubs do not.
            "answers": np.where(status == SCORED, answers, None).ravel(),  # type: ignore[call-overload]
            "rationale": np.where((status == GATED) | (status == DECLINED), "", rationale).ravel(),
            "created_at": _stamp_matrix(block["created_at_ts"], codes, cols, n, m),
            "updated_at": _stamp_matrix(block["updated_at_ts"], codes, cols, n, m),
        }
    )
    return out


def _stamp_matrix(stamps: pd.Series, codes: Any, cols: Any, n: int, m: int) -> pd.DatetimeIndex:
    """One time per (screening, dimension); dimensions absent from the file take the screening's
    earliest given time."""
    grid = np.full((n, m), np.datetime64("NaT"), dtype="datetime64[ns]")
    if stamps.notna().any():
        grid[codes, cols] = (
            stamps.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(dtype="datetime64[ns]")
        )
        never = np.datetime64("2262-01-01", "ns")
        earliest = np.where(np.isnat(grid), never, grid).min(axis=1)
        grid = np.where(np.isnat(grid), np.broadcast_to(earliest[:, None], (n, m)), grid)
        grid[grid == never] = np.datetime64("NaT")
    return pd.to_datetime(grid.ravel()).tz_localize("UTC")


def _check_answers(frame: pd.DataFrame, dims: list[Dimension], problems: Problems) -> None:
    """Parse the `answers` column: a JSON object of yes/no answers for a question-based dimension
    (PBIG's competitive advantage), which must give the row's score."""
    by_id = {d.id: d for d in dims}
    parsed: list[Any] = [None] * len(frame)
    for i, (row, cell, dim_id, score) in enumerate(
        frame[[ROW, "answers", "dimension_id", "score_num"]].itertuples(index=False, name=None)
    ):
        if cell == "":
            continue
        try:
            value = json.loads(cell)
        except ValueError:
            value = None
        if not isinstance(value, dict) or not all(isinstance(v, bool) for v in value.values()):
            problems.add(
                "answers",
                'must be a JSON object of true/false, e.g. {"q1": true}',
                row=row,
                value=cell,
            )
            continue
        dim = by_id.get(int(dim_id)) if dim_id == dim_id else None
        if dim is None:
            continue
        keys = [q["key"] for q in dim.questions]
        if not keys:
            problems.add(
                "answers", f"must be empty: {dim.key} asks no questions", row=row, value=cell
            )
        elif sorted(value) != sorted(keys):
            problems.add("answers", "must answer exactly: " + ", ".join(keys), row=row, value=cell)
        elif score == score and dim.rule().score_from_answers(value) != int(score):
            problems.add(
                "answers",
                f"give {dim.key} {dim.rule().score_from_answers(value)}, not the row's score",
                row=row,
                value=cell,
            )
        else:
            parsed[i] = {k: value[k] for k in keys}
    frame["answers_obj"] = parsed


def _ideas_named(keys: list[str]) -> list[tuple[str, int, str, int | None]]:
    """(external_id, id, domain key, domain's rubric id) of the stored ideas among `keys`.

    A file that names a good share of the catalogue reads all of it in one query: listing a
    hundred thousand keys as query parameters costs more than reading the rows it would skip.
    """
    columns = ("external_id", "id", "patent__domain__key", "patent__domain__rubric_id")
    ideas = Idea.objects.values_list(*columns)
    if len(keys) * 4 >= Idea.objects.count():
        return list(ideas)
    rows: list[tuple[str, int, str, int | None]] = []
    for part in chunked(keys, 5000):
        rows.extend(ideas.filter(external_id__in=part))
    return rows
