"""The Decide board: one row per idea and ranking (each dimension, and overall), from the model.

Every figure on a row comes from the same fit, so the columns reconcile:
- ``estimate``, ``low``, ``high``: the posterior mean and central 90 % interval (per dimension
  on the dimension's score scale, as a typical reviewer would score it; overall in standard
  units, 0 = the average idea, +1 = one standard deviation of ideas above it);
- ``p_top``: the probability of being in the top ``share`` of the idea's domain on this ranking;
- ``judge_share``: the part of the estimate's evidence that comes from the judges' predictions
  (0 = people only; "people" is 1 - judge_share);
- ``n_reviewers``: people who read the idea (a rating of any status but declined on that
  dimension; overall: on any dimension); ``n_gated``: those whose read was closed by a gate;
  ``n_predicted``: predictions used (reviewers who have not read it); ``n_category``: category
  answers ("not a B2B product"), kept out of the estimate and reported beside it;
- ``scores``: [reviewer, raw score or None, status] of each read; ``preds``: [reviewer,
  predicted score, confidence] (per dimension; overall rows list the readers and predicted
  reviewers by name).
- ``flags``: codes the page shows as badges (ONE_READER, NO_READER, MOSTLY_JUDGES); other
  apps add their own through the presenter's flag hook.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .model import ALL, GATED, SCORED, DomainFit, Scale, fit_domain, top_probability

ONE_READER, NO_READER, MOSTLY_JUDGES = "one_reader", "no_reader", "mostly_judges"
# What a prediction adds to the board (the fourth item of each ``preds`` entry):
# - SCALE_ONLY: built from the idea's own reads (the panel judge, an LLM shown the panel): it
#   carries the unread reviewer's scale, which the model already holds; no weight.
# - LEVEL_ONLY: the reviewer's usual level; says nothing about the idea; no weight.
# - TEXT_MODEL: the offline judge's text rule; the same reads and text the domain text model
#   learns from, so the text counts once, through that model (when its check passes).
# - NEW: a judge that read the idea and was shown none of its reads: new information,
#   counted by its measured accuracy where it beats the domain mean (model.fit_domain).
SCALE_ONLY, LEVEL_ONLY, TEXT_MODEL, NEW = "scale", "level", "text", "new"
BASES = (SCALE_ONLY, LEVEL_ONLY, TEXT_MODEL, NEW)
# An estimate resting more than this share on predictions is flagged.
MOSTLY_JUDGES_SHARE = 0.5
DEFAULT_TOP_SHARE = 0.10
# Routed reads per unread idea that bench/bench_decision.py needed to reach 0.8 overlap with
# the true top 10 % from the shipped demo's density (docs/decide.md); the page scales it to a
# domain's unread ideas ("how many routed reads would settle the shortlist").
SETTLE_READS_PER_UNREAD = 1.5
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
    """Rows for every catalogue idea x (each dimension with data, and ALL); plus a summary.

    ``frame``: the rating frame (reviewer_id, reviewer, idea_id, dimension, score, status);
    ``predictions``: reviewer_id, reviewer, idea_id, dimension, score, confidence (and, when
    known, signal and panel_size: what the prediction rests on); ``vectors``: per domain the
    idea ids and their TF-IDF rows, for the domain text model. ``people_only``: the board
    fitted on people's reads alone (no predictions, no text model).
    """
    # A reviewer with any rating of the idea (a decline included: they recused themselves) is
    # never predicted; declines themselves say nothing about the idea.
    preds = unread_predictions(frame, predictions)
    if people_only:
        preds = preds.iloc[:0]
    if len(preds):
        preds = preds.assign(basis=prediction_basis(preds))
    frame = frame[frame["status"].astype(str) != "declined"]
    rows: list[dict[str, Any]] = []
    summary: dict[str, Any] = {
        "top_share": top_share,
        "dimensions": [],
        "fits": {},
        "domains": {},
        "evidence": "people" if people_only else "all",
    }
    for domain, cat in catalog.groupby("domain", sort=True):
        ids = np.sort(cat["idea_id"].to_numpy(np.int64))
        dom_frame = frame[frame["idea_id"].isin(ids)]
        dom_preds = preds[preds["idea_id"].isin(ids)] if len(preds) else preds
        vec = None if people_only or vectors is None else vectors.get(str(domain))
        fitted = fit_domain(dom_frame, scales=scales, ideas=ids, predictions=dom_preds, vectors=vec)
        for f in fitted.fits:
            summary["fits"][f"{domain}|{f.dimension}"] = {
                "mu": _f(f.mu),
                "sigma": _f(np.sqrt(f.sigma2)),
                "tau": _f(np.sqrt(f.tau2)),
                "reviewers": len(f.reviewers),
            }
        dom_rows = _rows(str(domain), cat, fitted, dom_frame, dom_preds, scales, top_share)
        summary["domains"][str(domain)] = _domain_summary(
            dom_rows, fitted, has_text=vec is not None, top_share=top_share
        )
        rows += dom_rows
    summary["dimensions"] = sorted({r["dimension"] for r in rows if r["dimension"] != ALL})
    return rows, summary


def _domain_summary(
    rows: list[dict[str, Any]], fitted: DomainFit, *, has_text: bool, top_share: float
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
        if has_text
        else {},
        "judges": {
            dim: check.as_dict()  # type: ignore[attr-defined]
            for dim, check in fitted.judges.items()
        },
    }


def _rows(
    domain: str,
    cat: pd.DataFrame,
    fitted: DomainFit,
    frame: pd.DataFrame,
    preds: pd.DataFrame,
    scales: Mapping[str, Scale],
    top_share: float,
) -> list[dict[str, Any]]:
    info = {int(r.idea_id): r for r in cat[CATALOG_COLUMNS].itertuples(index=False)}
    dims = frame["dimension"].astype(str)
    status = frame["status"].astype(str)
    out: list[dict[str, Any]] = []
    text_dims = {d for d, c in fitted.text.items() if c.used}  # type: ignore[attr-defined]
    for dim, rk in fitted.rankings.items():
        text_used = bool(text_dims) if dim == ALL else dim in text_dims
        sub = frame if dim == ALL else frame[(dims == dim).to_numpy()]
        sub_status = status if dim == ALL else status[(dims == dim).to_numpy()]
        psub = preds if dim == ALL or not len(preds) else preds[preds["dimension"] == dim]
        readers = sub.groupby("idea_id")["reviewer_id"].nunique().to_dict()
        gated = sub[(sub_status == GATED).to_numpy()].groupby("idea_id")["reviewer_id"].nunique()
        gated_n = gated.to_dict()
        cats = scales.get(dim).categories if dim in scales else ()  # type: ignore[union-attr]
        if dim == ALL:
            cat_mask = np.zeros(len(sub), bool)
            for d, sc in scales.items():
                if sc.categories:
                    cat_mask |= ((dims == d) & frame["score"].isin(sc.categories)).to_numpy()
        else:
            cat_mask = sub["score"].isin(cats).to_numpy() if cats else np.zeros(len(sub), bool)
        n_cat = sub[cat_mask].groupby("idea_id").size().to_dict()
        if dim == ALL:
            pred_n = psub.groupby("idea_id")["reviewer_id"].nunique().to_dict() if len(psub) else {}
        else:
            pred_n = psub.groupby("idea_id").size().to_dict() if len(psub) else {}
        scores = _lists(sub, dim)
        plist = _pred_lists(psub, dim)
        p_top = top_probability(rk.estimate, rk.sd, share=top_share)
        low, high = rk.low, rk.high
        for j, idea_id in enumerate(rk.ideas.tolist()):
            meta = info[idea_id]
            n_read = int(readers.get(idea_id, 0))
            share = float(rk.judge_share[j])
            flags = []
            if n_read == 0:
                flags.append(NO_READER)
            elif n_read == 1:
                flags.append(ONE_READER)
            if share > MOSTLY_JUDGES_SHARE:
                flags.append(MOSTLY_JUDGES)
            out.append(
                {
                    "domain": domain,
                    "idea_id": idea_id,
                    "idea": str(meta.idea),
                    "title": str(meta.title),
                    "dimension": dim,
                    "estimate": _f(rk.estimate[j]),
                    "low": _f(low[j]),
                    "high": _f(high[j]),
                    "p_top": _f(p_top[j]),
                    "judge_share": _f(share),
                    "n_reviewers": n_read,
                    "n_gated": int(gated_n.get(idea_id, 0)),
                    "n_predicted": int(pred_n.get(idea_id, 0)),
                    "n_category": int(n_cat.get(idea_id, 0)),
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
    the prediction adds; overall: the reviewer's predictions' most common basis)."""
    out: dict[int, list[list[Any]]] = {}
    if not len(p):
        return out
    if "basis" not in p:
        p = p.assign(basis=prediction_basis(p))
    if dim == ALL:
        agg = p.groupby(["idea_id", "reviewer"]).agg(
            c=("confidence", "mean"), basis=("basis", lambda b: b.mode().iloc[0])
        )
        for (idea_id, rv), c, basis in zip(agg.index, agg["c"], agg["basis"], strict=True):
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
