"""Reasoning structure: per reviewer pair, agreement against the similarity of their judges'
reasons on shared items; point sampling for the chart."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd
from scipy import sparse

from apps.judges.engine.alignment.figures import _clean, _kind_pos, _values, alpha, frame_groups


def pearson(x: Iterable[float], y: Iterable[float]) -> float | None:
    xa, ya = np.asarray(list(x), float), np.asarray(list(y), float)
    if len(xa) < 3 or np.std(xa) == 0 or np.std(ya) == 0:
        return None
    return _clean(np.corrcoef(xa, ya)[0, 1])


# Pairs whose vectors are gathered at once: dense vectors are wide; sparse ones are narrow, but
# gathering all of them at once (a million shared items at 100x the demo) took 550 MB, the
# alignment job's peak (bench/bench_scale.py).
DENSE_BLOCK = 512
SPARSE_BLOCK = 20_000


def _row_products(vectors: Any, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """vectors[left[i]] . vectors[right[i]] for every i; vectors dense or a scipy sparse
    matrix, a block of pairs at a time."""
    out = np.zeros(len(left), dtype=float)
    if sparse.issparse(vectors):
        rows = sparse.csr_matrix(vectors)
        for start in range(0, len(left), SPARSE_BLOCK):
            a, b = left[start : start + SPARSE_BLOCK], right[start : start + SPARSE_BLOCK]
            out[start : start + SPARSE_BLOCK] = np.asarray(
                rows[a].multiply(rows[b]).sum(axis=1), dtype=float
            ).ravel()
        return out
    for start in range(0, len(left), DENSE_BLOCK):
        a, b = left[start : start + DENSE_BLOCK], right[start : start + DENSE_BLOCK]
        out[start : start + DENSE_BLOCK] = np.einsum("ij,ij->i", vectors[a], vectors[b])
    return out


class _Codes:
    """(reviewer, idea, dimension) triples as single integers, over the ids of every frame
    given, so that the shared items of a million reviewer pairs are compared as arrays."""

    def __init__(self, *frames: pd.DataFrame) -> None:
        self.reviewers = np.unique(
            np.concatenate([f["reviewer_id"].to_numpy(np.int64) for f in frames])
        )
        self.ideas = np.unique(np.concatenate([f["idea_id"].to_numpy(np.int64) for f in frames]))
        # Sorted as Python sorts them: the dimensions' order is that of sorted().
        self.dimensions = np.array(
            sorted({str(d) for f in frames for d in f["dimension"].unique()}), dtype=object
        )

    def dimension(self, frame: pd.DataFrame) -> np.ndarray:
        return np.searchsorted(self.dimensions, frame["dimension"].astype(str).to_numpy(object))

    def key(self, reviewer: np.ndarray, idea: np.ndarray, dimension: np.ndarray) -> np.ndarray:
        r = np.searchsorted(self.reviewers, reviewer)
        i = np.searchsorted(self.ideas, idea)
        return (r * len(self.ideas) + i) * len(self.dimensions) + dimension


def _shared_items(
    truth: pd.DataFrame, codes: _Codes
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every (reviewer a < reviewer b, item) that both scored: arrays a, b, idea, dimension
    code and the two scores, sorted by (a, b, idea, dimension). One score per reviewer and
    item, the first. Pairs come from each item's readers, not from every pair of reviewers:
    at 1,000 reviewers in 100 domains, 4,500 pairs share items of 500,000 pairs."""
    scored = truth[truth["score"].notna()]
    if scored.empty:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, empty, np.zeros(0), np.zeros(0)
    r = scored["reviewer_id"].to_numpy(np.int64)
    i = scored["idea_id"].to_numpy(np.int64)
    d = codes.dimension(scored)
    s = scored["score"].to_numpy(float)
    order = np.lexsort((r, d, i))  # stable: the first score of a reviewer and item leads
    r, i, d, s = r[order], i[order], d[order], s[order]
    same_item = (i[1:] == i[:-1]) & (d[1:] == d[:-1])
    first = np.r_[True, ~(same_item & (r[1:] == r[:-1]))]
    r, i, d, s = r[first], i[first], d[first], s[first]
    group = np.cumsum(np.r_[True, ~((i[1:] == i[:-1]) & (d[1:] == d[:-1]))])
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    # Readers of an item are sorted by reviewer: reader j and reader j + gap form a pair.
    gap = 1
    while gap < len(r):
        j = np.flatnonzero(group[:-gap] == group[gap:])
        if not len(j):
            break
        parts.append((j, j + gap))
        gap += 1
    left = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
    right = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
    a, b = r[left], r[right]
    order = np.lexsort((d[left], i[left], b, a))
    left, right = left[order], right[order]
    return a[order], b[order], i[left], d[left], s[left], s[right]


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The value of each wanted key in the sorted ``keys`` (-1 where it is not one)."""
    if not len(keys):
        return np.full(len(wanted), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[at] == wanted, values[at], -1)


def _agreeing_pairs(
    truth: pd.DataFrame, *, scales: dict[str, tuple[int, int]], min_shared: int, codes: _Codes
) -> tuple[list[tuple[int, int]], list[float], tuple[np.ndarray, ...]]:
    """The reviewer pairs that scored an item in common and have an agreement (the mean alpha
    over their dimensions with at least ``min_shared`` shared items), sorted; their
    agreements; and their shared items (``_shared_items``'s arrays, each pair's with the
    pair's number in front)."""
    a, b, idea, dim, sa, sb = _shared_items(truth, codes)
    if not len(a):
        return [], [], (np.zeros(0, np.int64),) * 5
    new_pair = np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])]
    pair_starts = np.flatnonzero(new_pair)
    pair_ends = np.r_[pair_starts[1:], len(a)]
    pairs: list[tuple[int, int]] = []
    agreements: list[float] = []
    kept = np.zeros(len(pair_starts), dtype=bool)
    for n, (start, end) in enumerate(zip(pair_starts.tolist(), pair_ends.tolist(), strict=True)):
        # The pair's items by dimension, then idea: each dimension's scores in idea order.
        by_dim = start + np.lexsort((idea[start:end], dim[start:end]))
        dims = dim[by_dim]
        bounds = np.flatnonzero(np.r_[True, dims[1:] != dims[:-1], True])
        alphas = []
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            if hi - lo < min_shared:
                continue
            rows = by_dim[lo:hi]
            dimension = str(codes.dimensions[dims[lo]])
            al = alpha(np.array([sa[rows], sb[rows]]), values=_values(scales, dimension))
            if al is not None:
                alphas.append(al)
        if alphas:
            kept[n] = True
            pairs.append((int(a[start]), int(b[start])))
            agreements.append(float(np.mean(alphas)))
    number = np.cumsum(kept) - 1  # each kept pair's number among the kept ones
    of_pair = np.repeat(np.arange(len(pair_starts)), pair_ends - pair_starts)
    on = kept[of_pair]
    return pairs, agreements, (number[of_pair[on]], a[on], b[on], idea[on], dim[on])


def _similarity_sums(
    kg: pd.DataFrame,
    codes: _Codes,
    shared: tuple[np.ndarray, ...],
    n_pairs: int,
    embed: Callable[[list[str]], Any],
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """One kind's reasons compared on the shared items (``_agreeing_pairs``'s): its distinct
    reasons and, per pair, how many items both readers' judges gave a reason for and the sum
    of those reasons' cosines. Its own function so that the kind's reasons and vectors are
    freed before the next kind's are read."""
    owner, a, b, idea, dim = shared
    kg = kg[kg["reason"].fillna("") != ""]
    # Each target's reason (the last one given, should a target repeat), found for both
    # readers of every shared item by binary search on the targets' codes.
    keys = codes.key(
        kg["reviewer_id"].to_numpy(np.int64), kg["idea_id"].to_numpy(np.int64), codes.dimension(kg)
    )
    last = ~pd.Series(keys).duplicated(keep="last").to_numpy()
    reason_of, texts = pd.factorize(kg["reason"].astype(str).to_numpy(object)[last], sort=True)
    if not len(texts) or not n_pairs:
        return texts, (np.zeros(n_pairs, np.int64), np.zeros(n_pairs))
    keys = keys[last]
    by_key = np.argsort(keys)
    keys, reason_of = keys[by_key], reason_of[by_key]
    left = _lookup(keys, reason_of, codes.key(a, idea, dim))
    right = _lookup(keys, reason_of, codes.key(b, idea, dim))
    both = (left >= 0) & (right >= 0)
    sims = _row_products(embed(list(texts)), left[both], right[both])
    count = np.bincount(owner[both], minlength=n_pairs)
    return texts, (count, np.bincount(owner[both], weights=sims, minlength=n_pairs))


def reasoned_rows(finals: pd.DataFrame, *, k: int | None = None) -> pd.Series:
    """Which finals' reasons the reasoning structure compares: each kind's at its largest k (or
    at `k`) that kept a prediction. Only kept predictions carry a reason worth comparing: a
    configuration whose predictions were all discarded gets no scatter at all (the page says
    why)."""
    largest = finals.groupby("kind")["k"].transform("max") if k is None else k
    return (finals["k"] == largest) & finals["pred"].notna()


class PartStore(Protocol):
    """Where computed parts are kept between scopes (selectors.reports: the cache)."""

    def get_many(self, digests: Sequence[str]) -> dict[str, dict[str, Any]]: ...

    def set_many(self, parts: dict[str, dict[str, Any]]) -> None: ...


# In every part's digest: a part computed by other code must not be taken for this code's.
PART_VERSION = "reasoning-part-1"


def reasoning_structure(
    truth: pd.DataFrame,
    finals: pd.DataFrame,
    *,
    scales: dict[str, tuple[int, int]],
    embed: Callable[[list[str]], Any],
    k: int | None = None,
    min_shared: int = 2,
    reasons: Callable[[str, np.ndarray], Sequence[str]] | None = None,
    part_of_idea: Mapping[int, Any] | pd.Series | None = None,
    store: PartStore | None = None,
) -> list[dict[str, Any]]:
    """Per configuration: points (reviewer pair, agreement, reason similarity) and Pearson r.

    truth: reviewer_id, reviewer, idea_id, dimension, score (scored ratings only).
    finals: as in the module doc; reasons at the largest k (or `k`) of each kind: a `reason`
    column, or `reasons(kind, final_ids)`, the reasons of those rows of `final_id` in order
    (one kind's reasons held at a time: at 1M ratings, two million of them were the alignment
    job's peak).
    Agreement of a pair = mean over shared dimensions (>= min_shared shared items) of their alpha.
    Similarity = mean cosine between the two reviewers' judges' reasons on the same shared items.

    Parts (`part_of_idea`, an idea's domain, say): a pair's point depends on the two reviewers'
    scores and reasons on the items they share, nothing else. When every reviewer scored in
    one part only, no pair spans two, so the structure is each part's computed alone, merged;
    a part whose rows (digest) are in `store` is taken from there, the others are computed and
    stored. The overall alignment scope then reads what its domains' scopes computed (39 of
    its 85 s at 1M ratings, under a profiler, were this structure). Otherwise the scope is one
    part.
    """
    if truth.empty or finals.empty:
        return []
    finals = finals[reasoned_rows(finals, k=k)]
    if reasons is None:
        finals = finals[finals["reason"].fillna("") != ""]
    finals = finals.reset_index(drop=True)  # a row's label is its position
    parts = _parts(truth, finals, part_of_idea)
    if store is None:
        return _merged(_computed_parts(truth, finals, parts, scales, embed, min_shared, reasons))
    digests = _part_digests(truth, finals, parts, scales=scales, min_shared=min_shared)
    known = store.get_many(digests)
    todo = [n for n, digest in enumerate(digests) if digest not in known]
    computed = _computed_parts(
        truth, finals, [parts[n] for n in todo], scales, embed, min_shared, reasons
    )
    if todo:
        store.set_many({digests[n]: part for n, part in zip(todo, computed, strict=True)})
    got = dict(zip(todo, computed, strict=True))
    return _merged([got[n] if n in got else known[d] for n, d in enumerate(digests)])


_Part = tuple[np.ndarray, np.ndarray]  # positions of a part's rows in truth and in finals


def _parts(
    truth: pd.DataFrame, finals: pd.DataFrame, part_of_idea: Mapping[int, Any] | pd.Series | None
) -> list[_Part]:
    """The rows of each part, or of the whole scope as one part when a reviewer scored in two
    parts (a pair of them could share items in both) or an idea has no part."""
    whole = [(np.arange(len(truth)), np.arange(len(finals)))]
    if part_of_idea is None:
        return whole
    truth_part = truth["idea_id"].map(part_of_idea)
    finals_part = finals["idea_id"].map(part_of_idea)
    if truth_part.isna().any() or finals_part.isna().any():
        return whole
    if (truth_part.groupby(truth["reviewer_id"].to_numpy()).nunique() > 1).any():
        return whole
    truth_rows = truth_part.groupby(truth_part.to_numpy()).indices
    finals_rows = finals_part.groupby(finals_part.to_numpy()).indices
    empty = np.zeros(0, np.int64)
    return [
        (truth_rows.get(key, empty), finals_rows.get(key, empty))
        for key in sorted(set(truth_rows) | set(finals_rows), key=str)
    ]


# What a part's structure is computed from (the digest): the other columns are not read.
_TRUTH_READ = ["reviewer_id", "reviewer", "idea_id", "dimension", "score"]
_FINALS_READ = ["reviewer_id", "idea_id", "dimension", "kind", "k", "final_id", "reason"]


def _part_digests(
    truth: pd.DataFrame,
    finals: pd.DataFrame,
    parts: list[_Part],
    *,
    scales: dict[str, tuple[int, int]],
    min_shared: int,
) -> list[str]:
    """Each part's digest: its rows (values and order) of what the structure reads, with the
    scales and settings. The rows are hashed once for the whole scope, each part's from them:
    the same rows hash the same in a domain's scope and in the overall one. A final's reason
    is known by its id (finals are not changed once their run is done)."""
    finals_read = [c for c in _FINALS_READ if c in finals.columns]
    truth_rows = pd.util.hash_pandas_object(truth[_TRUTH_READ], index=False).to_numpy()
    finals_rows = pd.util.hash_pandas_object(finals[finals_read], index=False).to_numpy()
    header = f"{PART_VERSION}\0{min_shared}\0{sorted(scales.items())}\0{_TRUTH_READ}\0{finals_read}"
    out = []
    for truth_at, finals_at in parts:
        digest = hashlib.sha256(header.encode())
        digest.update(truth_rows[truth_at].tobytes())
        digest.update(b"\0")
        digest.update(finals_rows[finals_at].tobytes())
        out.append(digest.hexdigest())
    return out


def _computed_parts(
    truth: pd.DataFrame,
    finals: pd.DataFrame,
    parts: list[_Part],
    scales: dict[str, tuple[int, int]],
    embed: Callable[[list[str]], Any],
    min_shared: int,
    reasons: Callable[[str, np.ndarray], Sequence[str]] | None,
) -> list[dict[str, Any]]:
    """These parts' structures (JSON-ready, for the store): per part whether it has agreeing
    pairs and, per kind, its largest k, its distinct reasons (how many, and the one's digest
    when there is one: whether the merged kind has two is a question over every part) and its
    points with the reviewers' ids. Each kind's reasons are read once for all these parts."""
    if not parts:
        return []
    names = truth.drop_duplicates("reviewer_id").set_index("reviewer_id")["reviewer"].to_dict()
    prepared = []
    for truth_at, finals_at in parts:
        part_truth = truth.take(truth_at)
        codes = _Codes(part_truth, finals.take(finals_at))
        pairs, agreements, shared = _agreeing_pairs(
            part_truth, scales=scales, min_shared=min_shared, codes=codes
        )
        prepared.append((codes, pairs, agreements, shared))
    out: list[dict[str, Any]] = [{"pairs": bool(p[1]), "kinds": {}} for p in prepared]
    part_of_row = np.full(len(finals), -1, dtype=np.int64)
    for n, (_, finals_at) in enumerate(parts):
        part_of_row[finals_at] = n
    for kind, kg in frame_groups(finals[part_of_row >= 0], "kind", sort=False):
        if reasons is not None:
            kg = kg.drop(columns="final_id").assign(
                reason=np.asarray(reasons(str(kind), kg["final_id"].to_numpy()), dtype=object)
            )
        for n, at in kg.groupby(part_of_row[kg.index.to_numpy()]).indices.items():
            rows = kg.take(at)
            codes, pairs, agreements, shared = prepared[n]
            texts, sums = _similarity_sums(rows, codes, shared, len(pairs), embed)
            count, total = sums
            out[n]["kinds"][str(kind)] = {
                "k": int(rows["k"].max()),
                "texts": len(texts),
                "text": hashlib.sha256(texts[0].encode()).hexdigest() if len(texts) == 1 else "",
                "points": [
                    {
                        "a": ra,
                        "b": rb,
                        "reviewer_a": names.get(ra, str(ra)),
                        "reviewer_b": names.get(rb, str(rb)),
                        "agreement": agreement,
                        "similarity": float(total[p] / count[p]),
                        "n_items": int(count[p]),
                    }
                    for p, ((ra, rb), agreement) in enumerate(zip(pairs, agreements, strict=True))
                    if count[p]
                ],
            }
    return out


def _merged(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scope's structure from its parts': what one computation over the whole gives. A kind
    is shown when the scope has two distinct reasons of it, its points are every part's, in
    the order of the reviewers' ids, its k the largest."""
    if not any(part["pairs"] for part in parts):
        return []
    kinds: dict[str, list[dict[str, Any]]] = {}
    for part in parts:
        for kind, share in part["kinds"].items():
            kinds.setdefault(kind, []).append(share)
    out = []
    for kind in sorted(kinds, key=_kind_pos):
        shares = kinds[kind]
        singles = {s["text"] for s in shares if s["texts"] == 1}
        if not any(s["texts"] > 1 for s in shares) and len(singles) < 2:
            continue
        points = sorted((p for s in shares for p in s["points"]), key=lambda p: (p["a"], p["b"]))
        out.append(
            {
                "kind": kind,
                "k": max(s["k"] for s in shares),
                "points": [{f: v for f, v in p.items() if f not in ("a", "b")} for p in points],
                "pearson_r": pearson(
                    [p["agreement"] for p in points], [p["similarity"] for p in points]
                ),
            }
        )
    return out


def sample_points(points: list[dict[str, Any]], *, limit: int) -> list[dict[str, Any]]:
    """At most `limit` points, evenly spaced along agreement: a readable scatter of the same
    shape (the statistics stay computed over every point)."""
    if len(points) <= limit:
        return points
    ordered = sorted(points, key=lambda p: (p["agreement"], p["reviewer_a"], p["reviewer_b"]))
    picks = np.linspace(0, len(ordered) - 1, limit).round().astype(int)
    return [ordered[i] for i in dict.fromkeys(int(i) for i in picks)]
