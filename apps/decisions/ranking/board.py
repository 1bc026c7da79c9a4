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
  predicted score, confidence, basis] (basis: what it adds, rows.BASES; per dimension; overall rows
  list the readers and predicted reviewers by name); ``text``: the domain text model entered
  the estimate.
- The people-only board (``build_boards``' "people") stores only its figures (estimate,
  interval, P(top)); ``people_rows`` merges them with the full rows.
- ``focus`` (overall rows): the dimension where one more read narrows the idea most, which
  routing names in a suggestion's reason.
- ``flags``: codes the page shows as badges (ONE_READER, NO_READER, MOSTLY_JUDGES, in
  ranking/rows.py); other apps add their own through the presenter's flag hook.

The rows are built, and stored, as columns, one slice per ranking (ranking/rows.py:
domain_slices); ``slice_rows`` turns a slice into these rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .digest import domain_digest
from .domain import DomainFit, fit_domain
from .model import ALL, Ranking, Scale
from .routing import pair_keys
from .rows import MOSTLY_JUDGES, domain_slices, prediction_basis, slice_rows

DEFAULT_TOP_SHARE = 0.10
# Routed reads per unread idea that bench/bench_decision.py needed to reach 0.8 overlap with
# the true top 10 % from the shipped demo's density (docs/decide.md); the page scales it to a
# domain's unread ideas ("how many routed reads would settle the shortlist").
SETTLE_READS_PER_UNREAD = 3.0
CATALOG_COLUMNS = ["idea_id", "idea", "title", "domain"]
# The rating frame's columns the board reads.
FRAME_COLUMNS = ["reviewer_id", "reviewer", "idea_id", "dimension", "score", "status"]


def _f(x: float, digits: int = 3) -> float:
    return round(float(x), digits)


def unread_predictions(frame: pd.DataFrame, predictions: pd.DataFrame) -> pd.DataFrame:
    """Predictions for (reviewer, idea) pairs the reviewer has not read (any rating counts)."""
    if not len(predictions):
        return predictions

    def keys(f: pd.DataFrame) -> np.ndarray:
        return pair_keys(f["reviewer_id"].to_numpy(), f["idea_id"].to_numpy())

    # The frame's distinct pairs first (hashed, not sorted): a rating per dimension repeats
    # each pair, and sorting a million keys was most of this call.
    p = predictions[~np.isin(keys(predictions), pd.unique(keys(frame)))]
    return p[p["score"].notna()]


def build_boards(
    frame: pd.DataFrame,
    *,
    predictions: pd.DataFrame,
    catalog: pd.DataFrame,
    scales: Mapping[str, Scale],
    top_share: float = DEFAULT_TOP_SHARE,
    vectors: Mapping[str, tuple[np.ndarray, Any]] | None = None,
    previous: Mapping[str, Any] | None = None,
    unread: bool = False,
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """The board ("all": people, the domain text model and independent judges where their
    checks pass) and the same model on people's reads only ("people"), from one fit: per
    board one slice per domain and ranking (each dimension with data, and ALL), its rows as
    columns (ranking/rows.py: domain_slices; slice_rows gives the rows); plus a summary.

    ``frame``: the rating frame (reviewer_id, reviewer, idea_id, dimension, score, status);
    ``predictions``: reviewer_id, reviewer, idea_id, dimension, score, confidence (and, when
    known, signal and panel_size: what the prediction rests on); ``vectors``: per domain the
    idea ids and their TF-IDF rows, for the domain text model.

    ``previous``: the summary of an earlier board whose rows the caller still has. A domain
    whose inputs have the digest recorded there (ranking/digest.py) is not fitted again: its
    slices are left out of the boards, its summary is the earlier one, and it is listed in
    the summary's ``kept`` (the caller keeps its earlier slices).

    ``unread``: the caller has passed ``unread_predictions(frame, predictions)`` already (it
    needs them too; at a million ratings each call costs a sort of every rating's pair).
    """
    # A reviewer with any rating of the idea (a decline included: they recused themselves) is
    # never predicted; declines themselves say nothing about the idea.
    preds = predictions if unread else unread_predictions(frame, predictions)
    if len(preds):
        preds = preds.assign(basis=prediction_basis(preds))
    frame = frame[frame["status"].astype(str).to_numpy(dtype=object) != "declined"]
    # Only the columns the model and the rows read, split by the catalogue's domains at once
    # (a stable sort: each domain's ratings keep their order).
    frame = frame[[c for c in FRAME_COLUMNS if c in frame]]
    domain_frames = _by_domain(frame, catalog)
    boards: dict[str, list[dict[str, Any]]] = {"all": [], "people": []}
    summary: dict[str, Any] = {
        "top_share": top_share,
        "dimensions": [],
        "fits": {},
        "domains": {},
        "people": {"domains": {}},
        "kept": [],
    }
    earlier = (previous or {}).get("domains") or {}
    for key, cat in catalog.groupby("domain", sort=True):
        domain = str(key)
        ids = np.sort(cat["idea_id"].to_numpy(np.int64))
        dom_frame = domain_frames.get(domain, frame.iloc[:0])
        dom_preds = preds[preds["idea_id"].isin(ids)] if len(preds) else preds
        vec = None if vectors is None else vectors.get(domain)
        digest = domain_digest(
            frame=dom_frame,
            predictions=dom_preds,
            catalog=cat[[c for c in CATALOG_COLUMNS if c in cat]],
            vectors=vec,
            scales=scales,
            top_share=top_share,
        )
        if (earlier.get(domain) or {}).get("digest") == digest:
            _keep_summary(summary, previous or {}, domain)
            continue
        fitted = fit_domain(dom_frame, scales=scales, ideas=ids, predictions=dom_preds, vectors=vec)
        for f in fitted.fits:
            summary["fits"][f"{domain}|{f.dimension}"] = {
                "mu": _f(f.mu),
                "sigma": _f(np.sqrt(f.sigma2)),
                "tau": _f(np.sqrt(f.tau2)),
                "reviewers": len(f.reviewers),
            }
        text_dims = {d for d, c in fitted.text.items() if c.used}  # type: ignore[attr-defined]
        slices = domain_slices(
            domain,
            cat,
            {"all": fitted.rankings, "people": fitted.people_rankings},
            text_dims,
            dom_frame,
            dom_preds,
            scales,
            top_share,
            focus=focus_dimensions(fitted.rankings),
        )
        full, people = (_overall(slices[name]) for name in ("all", "people"))
        summary["domains"][domain] = {
            **_domain_summary(full, full, fitted, has_text=vec is not None, top_share=top_share),
            "digest": digest,
            "dimensions": sorted({s["dimension"] for s in slices["all"] if s["dimension"] != ALL}),
        }
        summary["people"]["domains"][domain] = _domain_summary(
            full, people, None, has_text=False, top_share=top_share
        )
        for name, made in slices.items():
            boards[name] += made
    summary["dimensions"] = sorted(
        {d for info in summary["domains"].values() for d in info["dimensions"]}
    )
    return boards, summary


def _keep_summary(summary: dict[str, Any], previous: Mapping[str, Any], domain: str) -> None:
    """A kept domain's part of the summary, as the earlier board recorded it."""
    summary["kept"].append(domain)
    summary["domains"][domain] = previous["domains"][domain]
    summary["people"]["domains"][domain] = previous["people"]["domains"][domain]
    prefix = f"{domain}|"
    summary["fits"].update({k: v for k, v in previous["fits"].items() if k.startswith(prefix)})


def focus_dimensions(rankings: Mapping[str, Ranking]) -> list[str]:
    """Per idea (in the rankings' order) the overall row's ``focus``: the dimension where one
    more read narrows the idea most, its widest interval relative to the widest of that
    dimension in the domain (an unread idea's prior); the first such dimension on a tie, ""
    without any. Routing names it in a suggestion's reason. The widths are the rows' own
    (bounds rounded to 3 decimals), so the choice is the one the page's figures show."""
    dims = [d for d in rankings if d != ALL]
    if not dims:
        n = len(next(iter(rankings.values())).ideas) if rankings else 0
        return [""] * n
    widths = np.array([np.round(rankings[d].high, 3) - np.round(rankings[d].low, 3) for d in dims])
    widest = widths.max(axis=1, initial=0.0)
    relative = widths / np.where(widest > 0, widest, 1.0)[:, None]
    return np.array(dims, dtype=object)[np.argmax(relative, axis=0)].tolist()


def _by_domain(frame: pd.DataFrame, catalog: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each catalogue domain's ratings (of its ideas), in the frame's order."""
    domains = catalog["domain"].astype(str).to_numpy(dtype=object)
    keys = np.array(sorted(set(domains.tolist())), dtype=object)
    idea_domain = pd.Series(
        np.searchsorted(keys, domains),
        index=catalog["idea_id"].to_numpy(np.int64),
    )
    idea_domain = idea_domain[~idea_domain.index.duplicated()]
    code = idea_domain.reindex(frame["idea_id"].to_numpy(np.int64)).to_numpy()
    code = np.where(np.isnan(code), -1, code).astype(np.int64)
    order = np.argsort(code, kind="stable")
    bounds = np.searchsorted(code[order], np.arange(len(keys) + 1))
    return {str(key): frame.iloc[order[bounds[j] : bounds[j + 1]]] for j, key in enumerate(keys)}


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
        merged: list[dict[str, Any]] = []
        for full, people in zip(boards["all"], boards["people"], strict=True):
            merged += people_rows(slice_rows(full), slice_rows(people))
        return merged, summary
    return [r for s in boards["all"] for r in slice_rows(s)], {**summary, "evidence": "all"}


def _overall(slices: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((s for s in slices if s["dimension"] == ALL), None)


def _domain_summary(
    readers: dict[str, Any] | None,
    figures: dict[str, Any] | None,
    fitted: DomainFit | None,
    *,
    has_text: bool,
    top_share: float,
) -> dict[str, Any]:
    """Per domain: its ideas, those nobody read and how many of the true top ``share`` are
    expected among them (their summed P(top)), and each dimension's text and judges checks.
    ``readers``: the full board's overall slice; ``figures``: the overall slice of the board
    summed (the full one or the people's)."""
    n_ideas = len(readers["idea_id"]) if readers else 0
    unread = [j for j, n in enumerate(readers["n_reviewers"]) if n == 0] if readers else []
    p_top = figures["p_top"] if figures else []
    return {
        "ideas": n_ideas,
        "unread": len(unread),
        "expected_top_unread": _f(sum(p_top[j] for j in unread), 2),
        "settle_reads": math.ceil(SETTLE_READS_PER_UNREAD * len(unread)),
        "shortlist": max(1, math.ceil(top_share * n_ideas)) if n_ideas else 0,
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


def scales_from(
    ranges: Mapping[str, tuple[int, int]], categories: Mapping[str, Sequence[int]]
) -> dict[str, Scale]:
    """Scales from the rubric's (min, max) per dimension and its category levels."""
    return {
        k: Scale(int(lo), int(hi), tuple(int(c) for c in categories.get(k, ())))
        for k, (lo, hi) in ranges.items()
    }
