"""The board's rows: one plain dict per idea and ranking, with the readers, counts and lists.

What each column means is written in ranking/board.py (which builds the boards from the fits);
here are the codes a row carries (its flags, each prediction's basis) and the code that turns
a domain's rankings and its frames into rows without a pandas call per idea.
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


def _positions(ids: np.ndarray, ideas: np.ndarray) -> np.ndarray:
    """Each id's position in the sorted ``ideas`` (-1 where it is not one of them)."""
    n = len(ideas)
    if not n:
        return np.full(len(ids), -1, dtype=np.int64)
    at = np.searchsorted(ideas, ids)
    inside = (at < n) & (ideas[np.minimum(at, n - 1)] == ids)
    return np.where(inside, at, -1)


def _per_idea(pos: np.ndarray, n: int) -> list[int]:
    """How many of the positions fall on each idea (``groupby("idea_id").size()``)."""
    return np.bincount(pos[pos >= 0], minlength=n).tolist()


def _distinct_per_idea(pos: np.ndarray, who: np.ndarray, n: int) -> list[int]:
    """Distinct ``who`` per idea (``groupby("idea_id")[who].nunique()``)."""
    ok = pos >= 0
    if not ok.any():
        return [0] * n
    pos, who = pos[ok], who[ok]
    code = np.unique(who, return_inverse=True)[1].ravel()
    pairs = np.unique(pos * (int(code.max()) + 1) + code)
    return np.bincount(pairs // (int(code.max()) + 1), minlength=n).tolist()


def domain_rows(
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
    """Per board ("all", "people"): the rows of every ranking. The readers, counts and lists
    are the same on both boards (the people's board lists no predictions). ``focus``: per
    idea, the full board's overall rows' ``focus`` (board.focus_dimensions)."""
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in boards}
    first = next(iter(boards.values()), {})
    if not first:
        return out
    ideas = next(iter(first.values())).ideas
    meta = cat.set_index("idea_id").reindex(ideas)
    idea_codes = meta["idea"].astype(str).tolist()
    titles = meta["title"].astype(str).tolist()
    # Plain arrays: comparing them is several times faster than comparing pandas strings;
    # each rating's idea as its position in ``ideas`` (-1: not a ranked idea), and its
    # reviewer's and each prediction's as codes, so every count below is a bincount.
    dims = frame["dimension"].astype(str).to_numpy(dtype=object)
    status = frame["status"].astype(str).to_numpy(dtype=object)
    score = frame["score"].to_numpy(dtype=float)
    pos = _positions(frame["idea_id"].to_numpy(np.int64), ideas)
    reviewer = frame["reviewer_id"].to_numpy(np.int64)
    p_dims = preds["dimension"].astype(str).to_numpy(dtype=object) if len(preds) else None
    p_pos = _positions(preds["idea_id"].to_numpy(np.int64), ideas) if len(preds) else None
    for dim in first:
        on_dim = None if dim == ALL else dims == dim
        sub = frame if on_dim is None else frame[on_dim]
        sub_status = status if on_dim is None else status[on_dim]
        sub_pos = pos if on_dim is None else pos[on_dim]
        sub_reviewer = reviewer if on_dim is None else reviewer[on_dim]
        p_on = None if dim == ALL or p_dims is None else p_dims == dim
        psub = preds if p_on is None else preds[p_on]
        readers = _distinct_per_idea(sub_pos, sub_reviewer, len(ideas))
        gated = sub_status == GATED
        gated_n = _distinct_per_idea(sub_pos[gated], sub_reviewer[gated], len(ideas))
        cats = scales.get(dim).categories if dim in scales else ()  # type: ignore[union-attr]
        if dim == ALL:
            cat_mask = np.zeros(len(sub), bool)
            for d, sc in scales.items():
                if sc.categories:
                    cat_mask |= (dims == d) & np.isin(score, sc.categories)
        else:
            cat_mask = np.isin(score[dims == dim], cats) if cats else np.zeros(len(sub), bool)
        n_cat = _per_idea(sub_pos[cat_mask], len(ideas))
        if not len(psub) or p_pos is None:
            pred_n = [0] * len(ideas)
        elif p_on is None:
            pred_n = _distinct_per_idea(p_pos, psub["reviewer_id"].to_numpy(np.int64), len(ideas))
        else:
            pred_n = _per_idea(p_pos[p_on], len(ideas))
        scores = _lists(sub, dim)
        plist = _pred_lists(psub, dim)
        text_used = bool(text_dims) if dim == ALL else dim in text_dims
        # The boards' P(top) is drawn once where their posteriors are the same (no judge and
        # no text model entered this ranking): the same draws would give the same figures.
        drawn: list[tuple[Ranking, list[float]]] = []
        for name, rankings in boards.items():
            rk = rankings[dim]
            people = name == "people"
            p_top = next((p for other, p in drawn if _same_posterior(other, rk)), None)
            if p_top is None:
                p_top = np.round(top_probability(rk.estimate, rk.sd, share=top_share), 3).tolist()
                drawn.append((rk, p_top))
            est = np.round(rk.estimate, 3).tolist()
            low = np.round(rk.low, 3).tolist()
            high = np.round(rk.high, 3).tolist()
            share = np.round(rk.judge_share, 3).tolist()
            rows = out[name]
            if people:
                # The people's board keeps only what differs from the full one (the readers,
                # counts and lists are the same; it has no predictions and no text model):
                # people_rows() merges the two when the page asks for it.
                rows += [
                    {
                        "domain": domain,
                        "dimension": dim,
                        "idea_id": idea_id,
                        "estimate": e,
                        "low": lo,
                        "high": hi,
                        "p_top": pt,
                    }
                    for idea_id, e, lo, hi, pt in zip(
                        ideas.tolist(), est, low, high, p_top, strict=True
                    )
                ]
                continue
            # One pass over the columns (zip, no indexing): 385,000 rows at a million ratings.
            for idea_id, code, title, e, lo, hi, pt, sh, n_read, n_g, n_p, n_c in zip(
                ideas.tolist(),
                idea_codes,
                titles,
                est,
                low,
                high,
                p_top,
                share,
                readers,
                gated_n,
                pred_n,
                n_cat,
                strict=True,
            ):
                flags = [NO_READER] if n_read == 0 else [ONE_READER] if n_read == 1 else []
                if sh > MOSTLY_JUDGES_SHARE:
                    flags.append(MOSTLY_JUDGES)
                rows.append(
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
                        "scores": scores.get(idea_id, []),
                        "preds": plist.get(idea_id, []),
                        "flags": flags,
                        # The domain text model entered this estimate (its check passed).
                        "text": text_used,
                    }
                )
            if dim == ALL and focus is not None:
                block = rows[len(rows) - len(ideas) :]
                for row, where in zip(block, focus, strict=True):
                    row["focus"] = where
    return out


def _same_posterior(a: Ranking, b: Ranking) -> bool:
    return np.array_equal(a.estimate, b.estimate) and np.array_equal(a.sd, b.sd)


def _lists(sub: pd.DataFrame, dim: str) -> dict[int, list[list[Any]]]:
    """Per idea: [reviewer, raw score, status] for a dimension; overall: [reviewer, n scored,
    n gated] (raw scores do not mix across scales)."""
    if dim == ALL:
        st = sub["status"].astype(str)
        agg = (
            sub.assign(scored=(st == SCORED).to_numpy(), gated=(st == GATED).to_numpy())
            .groupby(["idea_id", "reviewer"])[["scored", "gated"]]
            .sum()
        )
        ideas = agg.index.get_level_values(0).to_numpy(np.int64)
        cells = list(
            map(
                list,
                zip(
                    agg.index.get_level_values(1).astype(str).tolist(),
                    agg["scored"].astype(np.int64).tolist(),
                    agg["gated"].astype(np.int64).tolist(),
                    strict=True,
                ),
            )
        )
        return _split_by_idea(ideas, cells)
    # Ordered by idea, then reviewer (a stable sort on arrays, as sort_values would).
    reviewer = sub["reviewer"].astype(str).to_numpy(dtype=object)
    ideas = sub["idea_id"].to_numpy(np.int64)
    order = np.lexsort((pd.factorize(reviewer, sort=True)[0], ideas))
    ideas = ideas[order]
    score = sub["score"].to_numpy(dtype=float)[order]
    finite = np.isfinite(score)
    raw = np.where(finite, np.nan_to_num(score).astype(np.int64), 0).astype(object)
    raw[~finite] = None
    # map(list, zip(...)) builds the many small lists in C: several times faster than a loop.
    cells = list(
        map(
            list,
            zip(
                reviewer[order].tolist(),
                raw.tolist(),
                sub["status"].astype(str).to_numpy(dtype=object)[order].tolist(),
                strict=True,
            ),
        )
    )
    return _split_by_idea(ideas, cells)


def _split_by_idea(ideas: np.ndarray, cells: list[list[Any]]) -> dict[int, list[list[Any]]]:
    """Cells ordered by idea, as one list per idea."""
    out: dict[int, list[list[Any]]] = {}
    if not len(ideas):
        return out
    starts = np.flatnonzero(np.r_[True, ideas[1:] != ideas[:-1]])
    bounds = np.r_[starts, len(ideas)].tolist()
    for j, idea_id in enumerate(ideas[starts].tolist()):
        out[idea_id] = cells[bounds[j] : bounds[j + 1]]
    return out


def _pred_lists(p: pd.DataFrame, dim: str) -> dict[int, list[list[Any]]]:
    """Per idea: [reviewer, predicted score (None overall), confidence, basis] (BASES: what
    the prediction adds; overall: the first in alphabetical order of the reviewer's bases:
    "new" before the echoes)."""
    out: dict[int, list[list[Any]]] = {}
    if not len(p):
        return out
    if "basis" not in p:
        p = p.assign(basis=prediction_basis(p))
    if dim == ALL:
        conf = p.groupby(["idea_id", "reviewer"])["confidence"].mean()
        first = p.sort_values("basis", kind="stable").drop_duplicates(["idea_id", "reviewer"])
        basis_of = first.set_index(["idea_id", "reviewer"])["basis"].reindex(conf.index)
        for (idea_id, rv), c, basis in zip(conf.index, conf, basis_of, strict=True):
            out.setdefault(int(idea_id), []).append(
                [str(rv), None, None if pd.isna(c) else round(float(c)), str(basis)]
            )
        return out
    s = p.sort_values(["idea_id", "reviewer"], kind="stable")
    for idea_id, rv, score, conf, basis in zip(
        s["idea_id"].tolist(),
        s["reviewer"].astype(str).tolist(),
        s["score"].tolist(),
        s["confidence"].tolist(),
        s["basis"].tolist(),
        strict=True,
    ):
        c = None if conf is None or conf != conf else round(float(conf))  # NaN != NaN
        out.setdefault(int(idea_id), []).append([rv, int(score), c, str(basis)])
    return out
