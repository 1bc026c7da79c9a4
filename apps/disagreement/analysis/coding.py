"""The integer codes compute_metrics works on, and each dimension's rows and reviewer pairs.

A rating frame is coded once: reviewers (by name), ideas (domain by domain, so every domain is
one contiguous block of columns), domains and dimensions become small integers. Per dimension
the scored rows are sorted by idea (hence by domain), and the reviewer pairs that co-rated an
idea are built once by a vectorised self-join: every scope and background then takes slices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

ALL = "__all__"


@dataclass(frozen=True)
class Codes:
    """The frame's reviewers, ideas, domains and dimensions as integer codes."""

    reviewers: pd.DataFrame
    rc: np.ndarray  # per row: reviewer code
    rev_name: list[str]
    rev_id: list[int]
    rev_bg: np.ndarray  # per reviewer: background label
    groups: list[str]  # ALL, then every background label found
    rev_in_bg: dict[str, np.ndarray]  # per group: which reviewers belong
    ideas: pd.DataFrame  # sorted by domain: each domain a contiguous block
    ic: np.ndarray  # per row: idea code
    domains: list[str]
    idea_dom: np.ndarray  # per idea: domain code
    dom_start: np.ndarray  # per domain: its first idea column
    dom_end: np.ndarray
    dims: list[str]  # the scales' order first, then the others alphabetically
    dc: np.ndarray  # per row: dimension code
    row_dom: np.ndarray  # per row: domain code

    @property
    def n_rev(self) -> int:
        return len(self.reviewers)

    @property
    def n_idea(self) -> int:
        return len(self.ideas)


def encode(frame: pd.DataFrame, scales: Mapping[str, tuple[int, int]]) -> Codes:
    """Code the frame's reviewers, ideas, domains and dimensions."""
    reviewers = (
        frame[["reviewer_id", "reviewer", "background"]]
        .drop_duplicates("reviewer_id")
        .assign(
            reviewer=lambda d: d["reviewer"].astype(str),
            background=lambda d: d["background"].fillna("").astype(str),
        )
        .sort_values(["reviewer", "reviewer_id"], kind="stable")
        .reset_index(drop=True)
    )
    n_rev = len(reviewers)
    rc = pd.Index(reviewers["reviewer_id"]).get_indexer(frame["reviewer_id"])
    rev_bg = reviewers["background"].to_numpy()
    # Background is a free label: every non-empty one found is a group, after "everyone".
    groups = [ALL] + sorted({str(b) for b in rev_bg.tolist() if str(b)})
    rev_in_bg = {b: (np.ones(n_rev, bool) if b == ALL else rev_bg == b) for b in groups}

    idea_cols = ["idea_id", "idea", "domain"] + (["title"] if "title" in frame.columns else [])
    ideas = (
        frame[idea_cols]
        .drop_duplicates("idea_id")
        .assign(domain=lambda d: d["domain"].astype(str))
        .sort_values(["domain", "idea_id"], kind="stable")  # each domain a contiguous block
        .reset_index(drop=True)
    )
    n_idea = len(ideas)
    ic = pd.Index(ideas["idea_id"]).get_indexer(frame["idea_id"])
    domains = sorted(ideas["domain"].unique().tolist())
    idea_dom = pd.Index(domains).get_indexer(ideas["domain"]) if n_idea else np.zeros(0, int)

    present = pd.unique(frame["dimension"].astype(str)).tolist()
    dims = [d for d in scales if d in present] + sorted(d for d in present if d not in scales)
    return Codes(
        reviewers=reviewers,
        rc=rc,
        rev_name=reviewers["reviewer"].tolist(),
        rev_id=[int(v) for v in reviewers["reviewer_id"].tolist()],
        rev_bg=rev_bg,
        groups=groups,
        rev_in_bg=rev_in_bg,
        ideas=ideas,
        ic=ic,
        domains=domains,
        idea_dom=idea_dom,
        dom_start=np.searchsorted(idea_dom, np.arange(len(domains))),
        dom_end=np.searchsorted(idea_dom, np.arange(len(domains)), side="right"),
        dims=dims,
        dc=pd.Index(dims).get_indexer(frame["dimension"].astype(str)) if dims else rc * 0,
        row_dom=idea_dom[ic] if len(ic) else np.zeros(0, int),
    )


@dataclass
class DimensionRows:
    """One dimension's scored rows, sorted by idea, and the reviewer pairs co-rating an idea."""

    dim: str
    x: np.ndarray  # scores
    vals: np.ndarray  # the distinct scores, sorted
    vi: np.ndarray  # per row: index of its score in vals
    r: np.ndarray  # reviewer codes
    i: np.ndarray  # idea codes
    dom: np.ndarray  # domain codes (sorted: the rows are sorted by idea)
    scopes: list[tuple[str, int | None]]  # (domain, code) with rows, then (ALL, None)
    left: np.ndarray  # per pair: row of the lower-coded reviewer
    right: np.ndarray
    inv: np.ndarray  # per pair: index among the distinct reviewer pairs
    pa: np.ndarray  # per distinct pair: its two reviewers
    pb: np.ndarray
    pair_dom: np.ndarray  # per pair: domain code
    val_pair: np.ndarray  # per pair: (left value, right value) as one code
    above: np.ndarray  # per row: above the reviewer's median in the scope (filled per scope)

    @property
    def n_v(self) -> int:
        return len(self.vals)

    @property
    def n_p(self) -> int:
        return len(self.pa)


def dimension_rows(c: Codes, d: int, score: np.ndarray, scored: np.ndarray) -> DimensionRows:
    """The scored rows of dimension ``d`` and their reviewer pairs (self-join on idea, once)."""
    dim = c.dims[d]
    in_dim = c.dc == d
    idx = np.flatnonzero(in_dim & scored)
    # Sorted by idea, hence by domain (ideas are coded domain by domain): every scope's
    # rows and pairs are then one contiguous slice, so scopes cost views, not copies.
    idx = idx[np.argsort(c.ic[idx], kind="stable")]
    x = score[idx]
    vals = np.unique(x)
    n_v = len(vals)
    vi = np.searchsorted(vals, x)
    r = c.rc[idx]
    i = c.ic[idx]
    dom = c.row_dom[idx]
    dom_with_rows = sorted(set(np.unique(c.row_dom[in_dim]).tolist()))
    scopes: list[tuple[str, int | None]] = [(c.domains[k], k) for k in dom_with_rows]
    scopes.append((ALL, None))

    left, right = _co_rated_pairs(i)
    ra, rb = r[left], r[right]
    if (ra == rb).any():
        bad = int(np.flatnonzero(ra == rb)[0])
        raise ValueError(
            f"reviewer {c.rev_name[ra[bad]]!r} has two ratings of idea "
            f"{c.ideas['idea'].iat[i[left[bad]]]!r} on dimension {dim!r}"
        )
    swap = ra > rb
    ra, rb = np.where(swap, rb, ra), np.where(swap, ra, rb)
    left, right = np.where(swap, right, left), np.where(swap, left, right)
    n_rev = c.n_rev
    ukeys, inv = _compress(ra.astype(np.int64) * n_rev + rb, n_rev * n_rev)
    return DimensionRows(
        dim=dim,
        x=x,
        vals=vals,
        vi=vi,
        r=r,
        i=i,
        dom=dom,
        scopes=scopes,
        left=left,
        right=right,
        inv=inv,
        pa=ukeys // max(n_rev, 1),
        pb=ukeys % max(n_rev, 1),
        pair_dom=dom[left],
        val_pair=vi[left] * n_v + vi[right],
        above=np.zeros(len(idx), dtype=bool),
    )


def _co_rated_pairs(item_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All (left, right) position pairs, left < right, within runs of equal items.

    ``item_sorted`` is sorted; a run of m rows yields m(m-1)/2 pairs, built without loops.
    """
    n = len(item_sorted)
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, item_sorted[1:] != item_sorted[:-1]])
    sizes = np.diff(np.r_[starts, n])
    run_end = np.repeat(starts + sizes, sizes)
    pos = np.arange(n)
    partners = run_end - pos - 1  # rows after me in my run
    total = int(partners.sum())
    left = np.repeat(pos, partners)
    first = np.cumsum(partners) - partners  # where my block starts in the output
    right = left + 1 + (np.arange(total) - np.repeat(first, partners))
    return left, right


def _compress(keys: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys, index of each key among them): np.unique without the sort when the
    key space is small enough to count densely."""
    if n_keys > 4 * len(keys) + 1_000_000:
        return np.unique(keys, return_inverse=True)
    seen = np.bincount(keys, minlength=n_keys) > 0
    distinct = np.flatnonzero(seen)
    rank = np.cumsum(seen) - 1
    return distinct, rank[keys]
