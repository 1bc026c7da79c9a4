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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .model import ALL, GATED, SCORED, Ranking, Scale, fit_all, top_probability

ONE_READER, NO_READER, MOSTLY_JUDGES = "one_reader", "no_reader", "mostly_judges"
# An estimate resting more than this share on predictions is flagged.
MOSTLY_JUDGES_SHARE = 0.5
DEFAULT_TOP_SHARE = 0.10
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


def build_board(
    frame: pd.DataFrame,
    *,
    predictions: pd.DataFrame,
    catalog: pd.DataFrame,
    scales: Mapping[str, Scale],
    top_share: float = DEFAULT_TOP_SHARE,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rows for every catalogue idea x (each dimension with data, and ALL); plus a summary.

    ``frame``: the rating frame (reviewer_id, reviewer, idea_id, dimension, score, status);
    ``predictions``: reviewer_id, reviewer, idea_id, dimension, score, confidence.
    """
    # A reviewer with any rating of the idea (a decline included: they recused themselves) is
    # never predicted; declines themselves say nothing about the idea.
    preds = unread_predictions(frame, predictions)
    frame = frame[frame["status"].astype(str) != "declined"]
    rows: list[dict[str, Any]] = []
    summary: dict[str, Any] = {"top_share": top_share, "dimensions": [], "fits": {}}
    for domain, cat in catalog.groupby("domain", sort=True):
        ids = np.sort(cat["idea_id"].to_numpy(np.int64))
        dom_frame = frame[frame["idea_id"].isin(ids)]
        dom_preds = preds[preds["idea_id"].isin(ids)] if len(preds) else preds
        fits, ranked = fit_all(dom_frame, scales=scales, ideas=ids, predictions=dom_preds)
        for f in fits:
            summary["fits"][f"{domain}|{f.dimension}"] = {
                "mu": _f(f.mu),
                "sigma": _f(np.sqrt(f.sigma2)),
                "tau": _f(np.sqrt(f.tau2)),
                "reviewers": len(f.reviewers),
            }
        rows += _rows(str(domain), cat, ranked, dom_frame, dom_preds, scales, top_share)
    summary["dimensions"] = sorted({r["dimension"] for r in rows if r["dimension"] != ALL})
    return rows, summary


def _rows(
    domain: str,
    cat: pd.DataFrame,
    ranked: Mapping[str, Ranking],
    frame: pd.DataFrame,
    preds: pd.DataFrame,
    scales: Mapping[str, Scale],
    top_share: float,
) -> list[dict[str, Any]]:
    info = {int(r.idea_id): r for r in cat[CATALOG_COLUMNS].itertuples(index=False)}
    dims = frame["dimension"].astype(str)
    status = frame["status"].astype(str)
    out: list[dict[str, Any]] = []
    for dim, rk in ranked.items():
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
    out: dict[int, list[list[Any]]] = {}
    if not len(p):
        return out
    if dim == ALL:
        agg = p.groupby(["idea_id", "reviewer"])["confidence"].mean()
        for (idea_id, rv), c in agg.items():
            out.setdefault(int(idea_id), []).append(
                [str(rv), None, None if pd.isna(c) else round(float(c))]
            )
        return out
    s = p.sort_values(["idea_id", "reviewer"], kind="stable")
    for idea_id, rv, score, conf in zip(
        s["idea_id"].tolist(),
        s["reviewer"].astype(str).tolist(),
        s["score"].tolist(),
        s["confidence"].tolist(),
        strict=True,
    ):
        c = None if conf is None or conf != conf else round(float(conf))  # NaN != NaN
        out.setdefault(int(idea_id), []).append([rv, int(score), c])
    return out


def scales_from(
    ranges: Mapping[str, tuple[int, int]], categories: Mapping[str, Sequence[int]]
) -> dict[str, Scale]:
    """Scales from the rubric's (min, max) per dimension and its category levels."""
    return {
        k: Scale(int(lo), int(hi), tuple(int(c) for c in categories.get(k, ())))
        for k, (lo, hi) in ranges.items()
    }
