"""The board's rows: one plain dict per idea and ranking, with the readers, counts and lists.

What each column means is written in ranking/board.py (which builds the boards from the fits);
here are the codes a row carries (its flags, each prediction's basis), the code that turns a
domain's rankings and its frames into slices (a ranking's rows as columns, as stored) without
a pandas call per idea, and ``slice_rows``, which turns a slice back into its rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .model import ALL, GATED, SCORED, Ranking, Scale
from .top import top_probability

ONE_READER, NO_READER, MOSTLY_JUDGES = "one_reader", "no_reader", "mostly_judges"
# What a prediction adds to the board (the fourth item of each ``preds`` entry):
# - SCALE_ONLY: built from the idea's own reads (the panel judge, an LLM shown the panel): it
#   carries the unread reviewer's scale, which the model already holds; no weight.
# - LEVEL_ONLY: the reviewer's usual level; says nothing about the idea; no weight.
# - TEXT_MODEL: the offline judge's text rule; the same reads and text the domain text model
#   learns from, so the text counts once, through that model (when its check passes).
# - NEW: a judge that read the idea and was shown none of its reads: new information,
#   counted by its measured accuracy where it beats the domain mean (domain.fit_domain).
SCALE_ONLY, LEVEL_ONLY, TEXT_MODEL, NEW = "scale", "level", "text", "new"
BASES = (SCALE_ONLY, LEVEL_ONLY, TEXT_MODEL, NEW)
# An estimate resting more than this share on predictions is flagged.
MOSTLY_JUDGES_SHARE = 0.5


def prediction_basis(predictions: pd.DataFrame) -> np.ndarray:
    """What each prediction adds to the board (one code per row, BASES)."""
    n = len(predictions)
    signal = (
        predictions["signal"].fillna("").astype(str).to_numpy()
        if "signal" in predictions
        else np.full(n, "", dtype=object)
    )
    panel = (
        pd.to_numeric(predictions["panel_size"], errors="coerce").fillna(0).to_numpy() > 0
        if "panel_size" in predictions
        else np.zeros(n, bool)
    )
    out = np.full(n, NEW, dtype=object)
    out[(signal == "panel") | ((signal == "") & panel)] = SCALE_ONLY
    out[signal == "level"] = LEVEL_ONLY
    out[signal == "text"] = TEXT_MODEL
    return out


def row_flags(n_readers: int, judge_share: float) -> list[str]:
    """The badges of a row: how many people read the idea, and whether judges carry it."""
    flags = [NO_READER] if n_readers == 0 else [ONE_READER] if n_readers == 1 else []
    if judge_share > MOSTLY_JUDGES_SHARE:
        flags.append(MOSTLY_JUDGES)
    return flags


def _positions(ids: np.ndarray, ideas: np.ndarray) -> np.ndarray:
    """Each id's position in the sorted ``ideas`` (-1 where it is not one of them)."""
    n = len(ideas)
    if not n:
        return np.full(len(ids), -1, dtype=np.int64)
    at = np.searchsorted(ideas, ids)
    inside = (at < n) & (ideas[np.minimum(at, n - 1)] == ids)
    return np.where(inside, at, -1)


def _offsets(pos: np.ndarray, n: int) -> list[int]:
    """Where each idea's cells start in cells sorted by idea position (n + 1 bounds)."""
    return np.searchsorted(pos, np.arange(n + 1)).tolist()


def _pairs(pos: np.ndarray, who: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort cells by (idea, reviewer): returns the order, each sorted cell's pair number and
    whether it opens a pair (a reviewer's first cell on the idea). Cells already in that order
    (domain_slices sorts a domain's once) are not sorted again: a stable sort keeps them."""
    same = pos[1:] == pos[:-1]
    if ((pos[1:] > pos[:-1]) | (same & (who[1:] >= who[:-1]))).all():
        order = np.arange(len(pos))
    else:
        order = np.lexsort((who, pos))
    p, w = pos[order], who[order]
    opens = np.ones(len(p), bool)
    opens[1:] = (p[1:] != p[:-1]) | (w[1:] != w[:-1])
    return order, np.cumsum(opens) - 1, opens


def _maybe_ints(values: np.ndarray) -> list[int | None]:
    """Whole numbers as ints, NaN as None (a JSON null)."""
    finite = np.isfinite(values)
    out: list[int | None] = np.where(finite, values, 0).astype(np.int64).tolist()
    for j in np.flatnonzero(~finite).tolist():
        out[j] = None
    return out


def _read_cells(
    pos: np.ndarray,
    who: np.ndarray,
    score: np.ndarray,
    status: np.ndarray,
    *,
    overall: bool,
    n: int,
) -> tuple[list[int], list[int], list[Any]]:
    """Per idea the readers, those whose read a gate closed, and the packed cells: for a
    dimension each read's [reviewer, raw score or None, status]; overall each reader's
    [reviewer, n scored, n gated] (raw scores do not mix across scales). Cells are ordered by
    idea, then reviewer."""
    order, pair, opens = _pairs(pos, who)
    p, w, st = pos[order], who[order], status[order]
    gated = st == GATED
    pair_idea = p[opens]
    n_pairs = len(pair_idea)
    readers = np.bincount(pair_idea, minlength=n).tolist()
    pair_gated = np.bincount(pair[gated], minlength=n_pairs)
    gated_readers = np.bincount(pair_idea[pair_gated > 0], minlength=n).tolist()
    if overall:
        scored = np.bincount(pair[st == SCORED], minlength=n_pairs)
        cells = [
            _offsets(pair_idea, n),
            w[opens].tolist(),
            scored.tolist(),
            pair_gated.tolist(),
        ]
    else:
        cells = [_offsets(p, n), w.tolist(), _maybe_ints(score[order]), st.tolist()]
    return readers, gated_readers, cells


def _prediction_cells(
    pos: np.ndarray,
    who: np.ndarray,
    score: np.ndarray,
    confidence: np.ndarray,
    basis: np.ndarray,
    *,
    overall: bool,
    n: int,
) -> tuple[list[int], list[Any]]:
    """Per idea the predictions listed, and the packed cells [reviewer, predicted score (None
    overall), confidence, basis] ordered by idea, then reviewer. Overall one cell per
    predicted reviewer: their mean confidence, and the first of their bases in alphabetical
    order ("new" before the echoes)."""
    order, pair, opens = _pairs(pos, who)
    p, w = pos[order], who[order]
    conf = confidence[order]
    if not overall:
        return np.bincount(p, minlength=n).tolist(), [
            _offsets(p, n),
            w.tolist(),
            score[order].astype(np.int64).tolist(),
            _maybe_ints(np.rint(conf)),
            basis[order].tolist(),
        ]
    pair_idea = p[opens]
    n_pairs = len(pair_idea)
    known = np.isfinite(conf)
    total = np.bincount(pair[known], weights=conf[known], minlength=n_pairs)
    count = np.bincount(pair[known], minlength=n_pairs)
    mean = np.divide(total, count, out=np.full(n_pairs, np.nan), where=count > 0)
    codes, labels = pd.factorize(basis[order], sort=True)
    first_basis = np.asarray(labels, dtype=object)[
        np.minimum.reduceat(codes, np.flatnonzero(opens))
    ]
    return np.bincount(pair_idea, minlength=n).tolist(), [
        _offsets(pair_idea, n),
        w[opens].tolist(),
        None,
        _maybe_ints(np.rint(mean)),
        first_basis.tolist(),
    ]


def domain_slices(
    domain: str,
    cat: pd.DataFrame,
    boards: Mapping[str, Mapping[str, Ranking]],
    text_dims: set[str],
    frame: pd.DataFrame,
    preds: pd.DataFrame,
    scales: Mapping[str, Scale],
    top_share: float,
    focus: list[str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Per board ("all", "people"): one slice per ranking, its rows as columns (what the
    snapshot stores; ``slice_rows`` turns one back into rows). ``focus``: per idea, the full
    board's overall rows' ``focus`` (board.focus_dimensions).

    A full slice holds the ideas (``idea_id``, ``idea``, ``title``), one list per figure and
    count, the domain's ``reviewers`` (names, alphabetical), and the ``scores`` and ``preds``
    cells packed as [offsets, reviewer positions in ``reviewers``, then one list per field].
    The readers, counts and lists are the same on both boards, so a people slice holds its
    figures alone (estimate, interval, P(top)) and is merged with the full one when read
    (board.people_rows). Columns, not one dict per row: at a million ratings the rows were a
    third of the recompute and most of its JSON."""
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in boards}
    first = next(iter(boards.values()), {})
    if not first:
        return out
    ideas = next(iter(first.values())).ideas
    n = len(ideas)
    meta = cat.set_index("idea_id").reindex(ideas)
    head = {
        "idea_id": ideas.tolist(),
        "idea": meta["idea"].astype(str).tolist(),
        "title": meta["title"].astype(str).tolist(),
    }
    # Reviewers as codes in alphabetical order of their names (usernames: unique), so that
    # sorting cells by code sorts them by name.
    n_frame = len(frame)
    names = np.r_[
        frame["reviewer"].astype(str).to_numpy(dtype=object),
        preds["reviewer"].astype(str).to_numpy(dtype=object) if len(preds) else [],
    ]
    codes, reviewers = pd.factorize(names, sort=True)
    reviewer_names = [str(r) for r in reviewers]
    # Plain arrays: comparing them is several times faster than comparing pandas strings.
    # Each frame's cells sorted once by (idea, reviewer), stably: every ranking's cells are a
    # subset of them in the order its rows list them.
    pos = _positions(frame["idea_id"].to_numpy(np.int64), ideas)
    code = codes[:n_frame]
    cells = np.lexsort((code, pos))
    pos, code = pos[cells], code[cells]
    dims = frame["dimension"].astype(str).to_numpy(dtype=object)[cells]
    status = frame["status"].astype(str).to_numpy(dtype=object)[cells]
    score = frame["score"].to_numpy(dtype=float)[cells]
    if len(preds):
        p_pos = _positions(preds["idea_id"].to_numpy(np.int64), ideas)
        p_code = codes[n_frame:]
        p_cells = np.lexsort((p_code, p_pos))
        p_pos, p_code = p_pos[p_cells], p_code[p_cells]
        p_dims = preds["dimension"].astype(str).to_numpy(dtype=object)[p_cells]
        p_score = preds["score"].to_numpy(dtype=float)[p_cells]
        p_conf = pd.to_numeric(preds["confidence"], errors="coerce").to_numpy(dtype=float)[p_cells]
        p_basis = (
            preds["basis"] if "basis" in preds else pd.Series(prediction_basis(preds))
        ).to_numpy(dtype=object)[p_cells]
    category = np.zeros(n_frame, bool)
    for d, sc in scales.items():
        if sc.categories:
            category |= (dims == d) & np.isin(score, sc.categories)
    for dim in first:
        overall = dim == ALL
        on = (pos >= 0) if overall else (pos >= 0) & (dims == dim)
        readers, gated_n, score_cells = _read_cells(
            pos[on], code[on], score[on], status[on], overall=overall, n=n
        )
        n_cat = np.bincount(pos[on & category], minlength=n).tolist()
        if len(preds):
            p_on = (p_pos >= 0) if overall else (p_pos >= 0) & (p_dims == dim)
            pred_n, pred_cells = _prediction_cells(
                p_pos[p_on],
                p_code[p_on],
                p_score[p_on],
                p_conf[p_on],
                p_basis[p_on],
                overall=overall,
                n=n,
            )
        else:
            pred_n, pred_cells = [0] * n, [[0] * (n + 1), [], [], [], []]
        text_used = bool(text_dims) if overall else dim in text_dims
        # The boards' P(top) is drawn once where their posteriors are the same (no judge and
        # no text model entered this ranking): the same draws would give the same figures.
        drawn: list[tuple[Ranking, list[float]]] = []
        for name, rankings in boards.items():
            rk = rankings[dim]
            p_top = next((p for other, p in drawn if _same_posterior(other, rk)), None)
            if p_top is None:
                p_top = np.round(top_probability(rk.estimate, rk.sd, share=top_share), 3).tolist()
                drawn.append((rk, p_top))
            figures = {
                "estimate": np.round(rk.estimate, 3).tolist(),
                "low": np.round(rk.low, 3).tolist(),
                "high": np.round(rk.high, 3).tolist(),
                "p_top": p_top,
            }
            if name == "people":
                out[name].append(
                    {"domain": domain, "dimension": dim, "idea_id": head["idea_id"], **figures}
                )
                continue
            piece: dict[str, Any] = {
                "domain": domain,
                "dimension": dim,
                # The domain text model entered these estimates (its check passed).
                "text": text_used,
                **head,
                **figures,
                "judge_share": np.round(rk.judge_share, 3).tolist(),
                "n_reviewers": readers,
                "n_gated": gated_n,
                "n_predicted": pred_n,
                "n_category": n_cat,
                "reviewers": reviewer_names,
                "scores": score_cells,
                "preds": pred_cells,
            }
            if overall and focus is not None:
                piece["focus"] = focus
            out[name].append(piece)
    return out


def _same_posterior(a: Ranking, b: Ranking) -> bool:
    return np.array_equal(a.estimate, b.estimate) and np.array_equal(a.sd, b.sd)


def _unpack(cells: list[Any], names: list[str], n: int) -> list[list[list[Any]]]:
    """Packed cells (domain_slices) as one list of cells per idea."""
    at, who, *fields = cells
    columns = [[None] * len(who) if f is None else f for f in fields]
    flat = list(map(list, zip([names[w] for w in who], *columns, strict=True)))
    return [flat[at[j] : at[j + 1]] for j in range(n)]


# A full slice's columns that hold one value per idea (the rest are the slice's own, or packed).
_PER_IDEA = {
    "idea_id",
    "idea",
    "title",
    "estimate",
    "low",
    "high",
    "p_top",
    "judge_share",
    "n_reviewers",
    "n_gated",
    "n_predicted",
    "n_category",
    "focus",
}
_PACKED = ("scores", "preds")


def slice_column(stored: Any, key: str) -> list[Any]:
    """One column of a stored slice, one value per idea in the slice's order."""
    return [r[key] for r in stored] if isinstance(stored, list) else stored[key]


def slice_idea(stored: Any, idea_id: int) -> dict[str, Any] | None:
    """``slice_rows(stored)``'s row of one idea, without building the others' (the idea page
    shows one idea of a domain's thousands); None when the slice does not hold it."""
    if isinstance(stored, list):
        return next((r for r in stored if r["idea_id"] == idea_id), None)
    try:
        j = stored["idea_id"].index(idea_id)
    except ValueError:
        return None
    one = {k: [v[j]] if k in _PER_IDEA else v for k, v in stored.items()}
    for key in _PACKED:
        if key in stored:
            at, who, *fields = stored[key]
            lo, hi = at[j], at[j + 1]
            one[key] = [[0, hi - lo], who[lo:hi], *[f if f is None else f[lo:hi] for f in fields]]
    return slice_rows(one)[0]


def slice_rows(stored: Any) -> list[dict[str, Any]]:
    """A stored slice as its rows (one dict per idea; ranking/board.py says what each column
    means). Snapshots made before slices were columns stored the rows themselves."""
    if isinstance(stored, list):
        return stored
    domain, dim, ids = stored["domain"], stored["dimension"], stored["idea_id"]
    figures = zip(
        ids, stored["estimate"], stored["low"], stored["high"], stored["p_top"], strict=True
    )
    if "idea" not in stored:  # a people slice: its figures alone
        return [
            {
                "domain": domain,
                "dimension": dim,
                "idea_id": idea_id,
                "estimate": e,
                "low": lo,
                "high": hi,
                "p_top": pt,
            }
            for idea_id, e, lo, hi, pt in figures
        ]
    n = len(ids)
    names = stored["reviewers"]
    text = stored["text"]
    rows = [
        {
            "domain": domain,
            "idea_id": idea_id,
            "idea": code,
            "title": title,
            "dimension": dim,
            "estimate": e,
            "low": lo,
            "high": hi,
            "p_top": pt,
            "judge_share": sh,
            "n_reviewers": n_read,
            "n_gated": n_g,
            "n_predicted": n_p,
            "n_category": n_c,
            "scores": scores,
            "preds": preds,
            "flags": row_flags(n_read, sh),
            "text": text,
        }
        for (idea_id, e, lo, hi, pt), code, title, sh, n_read, n_g, n_p, n_c, scores, preds in zip(
            figures,
            stored["idea"],
            stored["title"],
            stored["judge_share"],
            stored["n_reviewers"],
            stored["n_gated"],
            stored["n_predicted"],
            stored["n_category"],
            _unpack(stored["scores"], names, n),
            _unpack(stored["preds"], names, n),
            strict=True,
        )
    ]
    for row, where in zip(rows, stored.get("focus") or [], strict=False):
        row["focus"] = where
    return rows
