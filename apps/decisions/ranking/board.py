"""The Decide board: one row per idea and ranking (each dimension, and overall), from the model.

Every figure on a row comes from the same fit, so the columns reconcile:
- ``estimate``, ``low``, ``high``: the posterior mean and central 90 % interval (per dimension
  on the dimension's score scale, as a typical reviewer would score it; overall in standard
  units, 0 = the average idea, +1 = one standard deviation of ideas above it);
- ``p_top``: the probability of being in the top ``share`` of the idea's domain on this ranking;
- ``judge_share``: the part of the estimate's evidence that comes from the domain text model
  and from judges that read the idea (0 = people only; "people" is 1 - judge_share);
  predictions built from the idea's own reads add nothing and count for nothing;
- ``n_reviewers``: people who read the idea (a rating of any status but declined on that
  dimension; overall: on any dimension); ``n_gated``: those whose read was closed by a gate;
  ``n_predicted``: predictions listed (reviewers who have not read it); ``n_category``: category
  answers ("not a B2B product"), kept out of the estimate and reported beside it;
- ``scores``: [reviewer, raw score or None, status] of each read; ``preds``: [reviewer,
  predicted score, confidence, basis] (basis: what it adds, BASES; per dimension; overall rows
  list the readers and predicted reviewers by name); ``text``: the domain text model entered
  the estimate.
- The people-only board (``build_boards``' "people") stores only its figures (estimate,
  interval, P(top)); ``people_rows`` merges them with the full rows.
- ``flags``: codes the page shows as badges (ONE_READER, NO_READER, MOSTLY_JUDGES); other
  apps add their own through the presenter's flag hook.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .domain import DomainFit, fit_domain
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
DEFAULT_TOP_SHARE = 0.10
# Routed reads per unread idea that bench/bench_decision.py needed to reach 0.8 overlap with
# the true top 10 % from the shipped demo's density (docs/decide.md); the page scales it to a
# domain's unread ideas ("how many routed reads would settle the shortlist").
SETTLE_READS_PER_UNREAD = 2.8
CATALOG_COLUMNS = ["idea_id", "idea", "title", "domain"]


def _f(x: float, digits: int = 3) -> float:
    return round(float(x), digits)


def unread_predictions(frame: pd.DataFrame, predictions: pd.DataFrame) -> pd.DataFrame:
    """Predictions for (reviewer, idea) pairs the reviewer has not read (any rating counts)."""
    if not len(predictions):
        return predictions
    read = set(zip(frame["reviewer_id"].tolist(), frame["idea_id"].tolist(), strict=True))
    keep = [
        (r, i) not in read
        for r, i in zip(
            predictions["reviewer_id"].tolist(), predictions["idea_id"].tolist(), strict=True
        )
    ]
    p = predictions[np.array(keep, dtype=bool)]
    return p[p["score"].notna()]


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


def build_boards(
    frame: pd.DataFrame,
    *,
    predictions: pd.DataFrame,
    catalog: pd.DataFrame,
    scales: Mapping[str, Scale],
    top_share: float = DEFAULT_TOP_SHARE,
    vectors: Mapping[str, tuple[np.ndarray, Any]] | None = None,
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """The board ("all": people, the domain text model and independent judges where their
    checks pass) and the same model on people's reads only ("people"), from one fit: rows for
    every catalogue idea x (each dimension with data, and ALL); plus a summary.

    ``frame``: the rating frame (reviewer_id, reviewer, idea_id, dimension, score, status);
    ``predictions``: reviewer_id, reviewer, idea_id, dimension, score, confidence (and, when
    known, signal and panel_size: what the prediction rests on); ``vectors``: per domain the
    idea ids and their TF-IDF rows, for the domain text model.
    """
    # A reviewer with any rating of the idea (a decline included: they recused themselves) is
    # never predicted; declines themselves say nothing about the idea.
    preds = unread_predictions(frame, predictions)
    if len(preds):
        preds = preds.assign(basis=prediction_basis(preds))
    frame = frame[frame["status"].astype(str) != "declined"]
    boards: dict[str, list[dict[str, Any]]] = {"all": [], "people": []}
    summary: dict[str, Any] = {
        "top_share": top_share,
        "dimensions": [],
        "fits": {},
        "domains": {},
        "people": {"domains": {}},
    }
    for domain, cat in catalog.groupby("domain", sort=True):
        ids = np.sort(cat["idea_id"].to_numpy(np.int64))
        dom_frame = frame[frame["idea_id"].isin(ids)]
        dom_preds = preds[preds["idea_id"].isin(ids)] if len(preds) else preds
        vec = None if vectors is None else vectors.get(str(domain))
        fitted = fit_domain(dom_frame, scales=scales, ideas=ids, predictions=dom_preds, vectors=vec)
        for f in fitted.fits:
            summary["fits"][f"{domain}|{f.dimension}"] = {
                "mu": _f(f.mu),
                "sigma": _f(np.sqrt(f.sigma2)),
                "tau": _f(np.sqrt(f.tau2)),
                "reviewers": len(f.reviewers),
            }
        text_dims = {d for d, c in fitted.text.items() if c.used}  # type: ignore[attr-defined]
        rows = _rows(
            str(domain),
            cat,
            {"all": fitted.rankings, "people": fitted.people_rankings},
            text_dims,
            dom_frame,
            dom_preds,
            scales,
            top_share,
        )
        summary["domains"][str(domain)] = _domain_summary(
            rows["all"], fitted, has_text=vec is not None, top_share=top_share
        )
        summary["people"]["domains"][str(domain)] = _domain_summary(
            people_rows(
                [r for r in rows["all"] if r["dimension"] == ALL],
                [r for r in rows["people"] if r["dimension"] == ALL],
            ),
            None,
            has_text=False,
            top_share=top_share,
        )
        for name, r in rows.items():
            boards[name] += r
    summary["dimensions"] = sorted({r["dimension"] for r in boards["all"] if r["dimension"] != ALL})
    return boards, summary


def build_board(
    frame: pd.DataFrame,
    *,
    predictions: pd.DataFrame,
    catalog: pd.DataFrame,
    scales: Mapping[str, Scale],
    top_share: float = DEFAULT_TOP_SHARE,
    vectors: Mapping[str, tuple[np.ndarray, Any]] | None = None,
    people_only: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One of ``build_boards``' boards: the full one, or with ``people_only`` the one fitted
    on people's reads alone (no predictions, no text model)."""
    boards, summary = build_boards(
        frame,
        predictions=predictions,
        catalog=catalog,
        scales=scales,
        top_share=top_share,
        vectors=vectors,
    )
    if people_only:
        summary = {**summary, "domains": summary["people"]["domains"], "evidence": "people"}
        people = _by_ranking(boards["people"])
        merged: list[dict[str, Any]] = []
        for key, full in _by_ranking(boards["all"]).items():
            merged += people_rows(full, people.get(key, []))
        return merged, summary
    return boards["all"], {**summary, "evidence": "all"}


def _domain_summary(
    rows: list[dict[str, Any]], fitted: DomainFit | None, *, has_text: bool, top_share: float
) -> dict[str, Any]:
    """Per domain: its ideas, those nobody read and how many of the true top ``share`` are
    expected among them (their summed P(top)), and each dimension's text and judges checks."""
    overall = [r for r in rows if r["dimension"] == ALL]
    unread = [r for r in overall if r["n_reviewers"] == 0]
    return {
        "ideas": len(overall),
        "unread": len(unread),
        "expected_top_unread": _f(sum(r["p_top"] for r in unread), 2),
        "settle_reads": math.ceil(SETTLE_READS_PER_UNREAD * len(unread)),
        "shortlist": max(1, math.ceil(top_share * len(overall))) if overall else 0,
        "text": {
            dim: check.as_dict()  # type: ignore[attr-defined]
            for dim, check in fitted.text.items()
        }
        if has_text and fitted is not None
        else {},
        "judges": {
            dim: check.as_dict()  # type: ignore[attr-defined]
            for dim, check in fitted.judges.items()
        }
        if fitted is not None
        else {},
    }


def _by_ranking(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault((r["domain"], r["dimension"]), []).append(r)
    return out


def people_rows(full: list[dict[str, Any]], people: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The people's board as full rows: the full board's rows with the people's figures (no
    predictions, no text model, so no judges' share and no "mostly judges")."""
    figures = {r["idea_id"]: r for r in people}
    out = []
    for r in full:
        mine = figures.get(r["idea_id"])
        if mine is None:
            continue
        out.append(
            {
                **r,
                **mine,
                "judge_share": 0.0,
                "n_predicted": 0,
                "preds": [],
                "text": False,
                "flags": [f for f in r.get("flags", []) if f != MOSTLY_JUDGES],
            }
        )
    return out


def _counts(series: pd.Series, ideas: np.ndarray) -> list[int]:
    return (
        series.reindex(ideas, fill_value=0).astype(np.int64).tolist()
        if len(series)
        else [0] * len(ideas)
    )


def _rows(
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
    dims = frame["dimension"].astype(str)
    status = frame["status"].astype(str)
    for dim in first:
        on_dim = None if dim == ALL else (dims == dim).to_numpy()
        sub = frame if on_dim is None else frame[on_dim]
        sub_status = status if on_dim is None else status[on_dim]
        psub = preds if dim == ALL or not len(preds) else preds[preds["dimension"] == dim]
        readers = _counts(sub.groupby("idea_id")["reviewer_id"].nunique(), ideas)
        gated_n = _counts(
            sub[(sub_status == GATED).to_numpy()].groupby("idea_id")["reviewer_id"].nunique(),
            ideas,
        )
        cats = scales.get(dim).categories if dim in scales else ()  # type: ignore[union-attr]
        if dim == ALL:
            cat_mask = np.zeros(len(sub), bool)
            for d, sc in scales.items():
                if sc.categories:
                    cat_mask |= ((dims == d) & frame["score"].isin(sc.categories)).to_numpy()
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
        for name, rankings in boards.items():
            rk = rankings[dim]
            people = name == "people"
            p_top = np.round(top_probability(rk.estimate, rk.sd, share=top_share), 3).tolist()
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


def _lists(sub: pd.DataFrame, dim: str) -> dict[int, list[list[Any]]]:
    """Per idea: [reviewer, raw score, status] for a dimension; overall: [reviewer, n scored,
    n gated] (raw scores do not mix across scales)."""
    out: dict[int, list[list[Any]]] = {}
    if dim == ALL:
        st = sub["status"].astype(str)
        agg = (
            sub.assign(scored=(st == SCORED).to_numpy(), gated=(st == GATED).to_numpy())
            .groupby(["idea_id", "reviewer"])[["scored", "gated"]]
            .sum()
        )
        for (idea_id, rv), sc, gt in zip(agg.index, agg["scored"], agg["gated"], strict=True):
            out.setdefault(int(idea_id), []).append([str(rv), int(sc), int(gt)])
        return out
    s = sub.sort_values(["idea_id", "reviewer"], kind="stable")
    score = s["score"].to_numpy(dtype=float)
    finite = np.isfinite(score)
    raw = np.where(finite, np.nan_to_num(score).astype(np.int64), 0).astype(object)
    raw[~finite] = None
    # map(list, zip(...)) builds the many small lists in C: several times faster than a loop.
    cells = list(
        map(
            list,
            zip(
                s["reviewer"].astype(str).tolist(),
                raw.tolist(),
                s["status"].astype(str).tolist(),
                strict=True,
            ),
        )
    )
    ideas = s["idea_id"].to_numpy(np.int64)
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


def scales_from(
    ranges: Mapping[str, tuple[int, int]], categories: Mapping[str, Sequence[int]]
) -> dict[str, Scale]:
    """Scales from the rubric's (min, max) per dimension and its category levels."""
    return {
        k: Scale(int(lo), int(hi), tuple(int(c) for c in categories.get(k, ())))
        for k, (lo, hi) in ranges.items()
    }
