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

import pandas as pd

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.dataio.importers import ImportResult
from apps.dataio.importers.common import (
    INTEGER,
    ROW,
    Problems,
    check_columns,
    chunked,
    per_distinct,
    require_values,
)
from apps.dataio.importers.ratings_gates import check_gates_and_expand, gate_rows
from apps.dataio.importers.reading import read_table
from apps.dataio.importers.streams import ImportContent
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
    """Read, check every cell, judge every screening against its gates, then store: every
    problem is reported at once, and nothing is stored unless there is none."""
    frame = read_table(content, filename)
    check_columns(frame, required=REQUIRED, optional=OPTIONAL, kind="ratings")
    problems = Problems()
    has_rationale = "rationale" in frame.columns
    ok = require_values(frame, problems, ["idea", "reviewer", "dimension"])
    frame, idea_bad, no_rubric = _with_ideas(frame, problems)
    frame, reviewer_bad = _with_reviewers(frame, problems)
    frame, dims, dimension_bad = _with_dimensions(frame, problems, no_rubric)
    given, score_bad = _with_scores(frame, problems)
    status_bad = _with_statuses(frame, problems, given)
    _with_times(frame, problems)
    frame["answers_obj"] = None
    if "answers" in frame.columns:
        _check_answers(frame, dims, problems)
    dup = _duplicates(frame, problems, ok)
    row_bad = (
        ~ok
        | idea_bad
        | reviewer_bad
        | dimension_bad
        | score_bad
        | dup
        | status_bad
        | frame["dimension_id"].isna()
    )
    rows_read = int(len(frame))
    screenings = gate_rows(frame, row_bad)
    # From here only `screenings` is read: the parsed file and its lookups go before the gates
    # build their matrices (issue 29: a 98 MB file cost the web process +625 MB).
    del frame, row_bad, given
    final = check_gates_and_expand(screenings, dims, problems)
    del screenings
    problems.raise_if_any("The ratings file has errors.")
    result = ImportResult(kind="ratings", rows=rows_read)
    if final.empty:
        return result
    if not has_rationale:
        final = final.assign(rationale=None)
    _store(final, result, actor=actor, dry_run=dry_run)
    return result


def _with_ideas(frame: pd.DataFrame, problems: Problems) -> tuple[pd.DataFrame, Any, Any]:
    """Each row's idea id, domain and rubric (the domain's, else the default rubric); returns
    the frame and the masks of rows naming an unknown idea and of rows whose idea has no
    rubric."""
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
    return frame, unknown_idea | no_rubric, no_rubric


def _with_reviewers(frame: pd.DataFrame, problems: Problems) -> tuple[pd.DataFrame, Any]:
    """Each row's reviewer id; only reviewer accounts hold ratings. Returns the frame and the
    mask of rows naming an unknown account or one that is not a reviewer's."""
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
    return frame, unknown_reviewer | not_reviewer


def _with_dimensions(
    frame: pd.DataFrame, problems: Problems, no_rubric: Any
) -> tuple[pd.DataFrame, list[Dimension], Any]:
    """Each row's dimension id and scale, looked up in its idea's rubric. Returns the frame,
    the dimensions of every rubric the file rates, and the mask of rows naming a dimension
    their rubric lacks (the error says how to attach another rubric)."""
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
    return frame, dims, unknown_dim


def _with_scores(frame: pd.DataFrame, problems: Problems) -> tuple[Any, Any]:
    """`score_num`: the score as a number. Empty means "not rated by design"; otherwise a whole
    number on the dimension's scale. Returns the mask of rows with a score and the mask of
    rows whose score is not a whole number or off the scale."""
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
    return given, not_int | off


def _with_statuses(frame: pd.DataFrame, problems: Problems, given: Any) -> Any:
    """`status_given`: the stored state the optional `status` column names ("" when absent),
    which must agree with the score being there or not; returns the mask of rows where not."""
    if "status" not in frame.columns:
        frame["status_given"] = ""
        return pd.Series(False, index=frame.index)
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
    return bad_status | (not_scored & given) | missing_score


def _with_times(frame: pd.DataFrame, problems: Problems) -> None:
    """`created_at_ts` and `updated_at_ts`: the optional times, parsed (NaT when absent)."""
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


def _duplicates(frame: pd.DataFrame, problems: Problems, ok: Any) -> Any:
    """Rows repeating an (idea, reviewer, dimension) of an earlier row: the file must say one
    thing per rating. Returns their mask."""
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
    return dup


def _store(final: pd.DataFrame, result: ImportResult, *, actor: Any, dry_run: bool) -> None:
    """Write the ratings through the one rating store (history, assignments settled), count
    what changed into `result`, and tell the recomputes unless this is a dry run."""
    stored = ratings_store(
        rows=final[COLUMNS],
        source=IMPORT,
        changed_by_id=getattr(actor, "pk", None),
        settle_assignments=True,
    )
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
    if stored.assignments:
        result.notes.append(f"{stored.assignments} assignments created or updated.")
    if stored.reviewer_ids and not dry_run:
        ratings_changed(reviewer_ids=stored.reviewer_ids)


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
