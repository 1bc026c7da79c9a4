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


def _counts(series: pd.Series, ideas: np.ndarray) -> list[int]:
    return (
        series.reindex(ideas, fill_value=0).astype(np.int64).tolist()
        if len(series)
        else [0] * len(ideas)
    )


def domain_rows(
    domain: str,
    cat: pd.DataFrame,
    boards: Mapping[str, Mapping[str, Ranking]],
    text_dims: set[str],
    frame: pd.DataFrame,
    preds: pd.DataFrame,
    scales: Mapping[str, Scale],
    top_share: float,
) -> dict[str, list[dict[str, Any]]]:
    """Per board ("all", "people"): the rows of every ranking. The readers, counts and lists
    are the same on both boards (the people's board lists no predictions)."""
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in boards}
    first = next(iter(boards.values()), {})
    if not first:
        return out
    ideas = next(iter(first.values())).ideas
    meta = cat.set_index("idea_id").reindex(ideas)
    idea_codes = meta["idea"].astype(str).tolist()
    titles = meta["title"].astype(str).tolist()
    # Plain arrays: comparing them is several times faster than comparing pandas strings.
    dims = frame["dimension"].astype(str).to_numpy(dtype=object)
    status = frame["status"].astype(str).to_numpy(dtype=object)
    for dim in first:
        on_dim = None if dim == ALL else dims == dim
        sub = frame if on_dim is None else frame[on_dim]
        sub_status = status if on_dim is None else status[on_dim]
        psub = preds if dim == ALL or not len(preds) else preds[preds["dimension"] == dim]
        readers = _counts(sub.groupby("idea_id")["reviewer_id"].nunique(), ideas)
        gated_n = _counts(
            sub[sub_status == GATED].groupby("idea_id")["reviewer_id"].nunique(),
            ideas,
        )
        cats = scales.get(dim).categories if dim in scales else ()  # type: ignore[union-attr]
        if dim == ALL:
            cat_mask = np.zeros(len(sub), bool)
            for d, sc in scales.items():
                if sc.categories:
                    cat_mask |= (dims == d) & frame["score"].isin(sc.categories).to_numpy()
        else:
            cat_mask = sub["score"].isin(cats).to_numpy() if cats else np.zeros(len(sub), bool)
        n_cat = _counts(sub[cat_mask].groupby("idea_id").size(), ideas)
        if not len(psub):
            pred_n = [0] * len(ideas)
        elif dim == ALL:
            pred_n = _counts(psub.groupby("idea_id")["reviewer_id"].nunique(), ideas)
        else:
            pred_n = _counts(psub.groupby("idea_id").size(), ideas)
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
                for j, idea_id in enumerate(ideas.tolist()):
                    rows.append(
                        {
                            "domain": domain,
                            "dimension": dim,
                            "idea_id": idea_id,
                            "estimate": est[j],
                            "low": low[j],
                            "high": high[j],
                            "p_top": p_top[j],
                        }
                    )
                continue
            for j, idea_id in enumerate(ideas.tolist()):
                n_read = readers[j]
                flags = [NO_READER] if n_read == 0 else [ONE_READER] if n_read == 1 else []
                if share[j] > MOSTLY_JUDGES_SHARE:
                    flags.append(MOSTLY_JUDGES)
                rows.append(
                    {
                        "domain": domain,
                        "idea_id": idea_id,
                        "idea": idea_codes[j],
                        "title": titles[j],
                        "dimension": dim,
                        "estimate": est[j],
                        "low": low[j],
                        "high": high[j],
                        "p_top": p_top[j],
                        "judge_share": share[j],
                        "n_reviewers": n_read,
                        "n_gated": gated_n[j],
                        "n_predicted": pred_n[j],
                        "n_category": n_cat[j],
                        "scores": scores.get(idea_id, []),
                        "preds": plist.get(idea_id, []),
                        "flags": flags,
                        # The domain text model entered this estimate (its check passed).
                        "text": text_used,
                    }
                )
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
