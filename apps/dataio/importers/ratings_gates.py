"""The ratings import's screenings: each (reviewer, idea) of the file judged against its rubric's
gates at once, as a (screenings x dimensions) matrix per rubric, and expanded to one rating per
dimension of the rubric (apps.dataio.importers.ratings reads and checks the cells first).

The gates are `screening.gates.open_matrix` / `status_matrix`, the form's rule; only the
screenings that break it go through `gates.validate_scores`, which words the errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from apps.dataio.importers.common import ROW, Problems
from apps.screening.gates import DimensionRule, open_matrix, status_matrix, validate_scores
from apps.screening.models import Dimension, Rating

SCORED = Rating.Status.SCORED.value
GATED = Rating.Status.NOT_RATED_BY_DESIGN.value
DECLINED = Rating.Status.DECLINED.value


def gate_rows(frame: pd.DataFrame, row_bad: pd.Series) -> pd.DataFrame:
    """The rows the gates judge (a known reviewer, idea and rubric) with only the columns they
    read and `_bad` (the row has an error): a copy of part of the frame, so the frame itself can
    be let go."""
    keep = frame["reviewer_id"].notna() & frame["idea_id"].notna() & ~no_rubric_mask(frame)
    return frame.loc[keep, [c for c in GATE_COLUMNS if c in frame.columns]].assign(
        _bad=row_bad[keep].to_numpy()
    )


def check_gates_and_expand(
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
