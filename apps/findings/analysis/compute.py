"""Findings per idea, per domain and per (domain, dimension), with their discovery estimates.

Input: one row per rationale (a frame with columns rating_id, idea_id, domain, dimension,
member, text), where `member` is the sampling unit: a reviewer id for reviewers' rationales, a
judge configuration for judges' reasons. The two sources are computed by separate calls and never
mixed. Output: a JSON-ready dict (see `compute_findings`).

Identity: findings are clustered once per domain, so one finding has one id wherever it appears;
an idea's findings are the domain's findings restricted to the idea's units (a point shared by
two ideas of a patent is one domain finding, raised on both ideas). Every count on a page comes
from the same clustering.

Sampling units: per idea, the reviewers who wrote at least one rationale on it; per domain and
per dimension, the reviewers who wrote at least one rationale in it. A finding's incidence is the
number of those reviewers who raised it. `saturation` averages, over a domain's ideas with at
least two such reviewers, the share of each idea's Chao2 total that t reviewers are expected to
raise; its `k80` is the panel size at which that average reaches 80 %.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from apps.findings.analysis.dedup import DEFAULT_THRESHOLD, _cut, _tree, name_of
from apps.findings.analysis.estimators import (
    chao2,
    coverage,
    discovery_curve,
    expected_new,
    reviewers_for_share,
)
from apps.findings.analysis.units import split_units

COLUMNS = ["rating_id", "idea_id", "domain", "dimension", "member", "text"]
MORE_REVIEWERS = (1, 2, 5)
SWEEP = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
SATURATION_SHARE = 0.8
# Panel sizes the saturation curve is drawn for.
SATURATION_MAX = 12
MIN_UNITS_FOR_IDEA_BOOTSTRAP = 1

Embed = Callable[[Sequence[str]], np.ndarray]


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 3)


def scope_estimates(
    incidences: Sequence[int], units: int, *, n_rationales: int, n_units: int, seed: int = 0
) -> dict[str, Any]:
    """The command's and the API's figures for one scope (see docs/metrics.md)."""
    y = list(incidences)
    est = chao2(y, units)
    curve = discovery_curve(y, units, until=max(2 * units, units + 5), seed=seed)
    return {
        "n_rationales": n_rationales,
        "n_units": n_units,
        "n_findings": len(y),
        "n_reviewers": units,
        "curve": [
            {
                "reviewers": p.reviewers,
                "findings": _num(p.findings),
                "low": _num(p.low),
                "high": _num(p.high),
                "extrapolated": p.extrapolated,
            }
            for p in curve
        ],
        "chao2": {"estimate": _num(est.estimate), "low": _num(est.low), "high": _num(est.high)},
        "q1": est.q1,
        "q2": est.q2,
        "unseen": _num(est.estimate - len(y)) if units >= 2 else None,
        "coverage": _num(coverage(y, units)) if y else None,
        "expected_new": {str(k): _num(expected_new(y, units, k)) for k in MORE_REVIEWERS},
        "k80": reviewers_for_share(y, units, share=SATURATION_SHARE) if y else None,
    }


def _incidences(frame: pd.DataFrame) -> tuple[list[int], int]:
    """Per finding, how many distinct members raised it; and how many members there are."""
    if frame.empty:
        return [], 0
    return _incidences_of(frame["finding"].tolist(), frame["member"].tolist())


def _incidences_of(findings: Sequence[Any], members: Sequence[Any]) -> tuple[list[int], int]:
    """`_incidences` on plain lists (one entry per unit): findings in sorted order."""
    raised: dict[Any, set[Any]] = {}
    for finding, member in zip(findings, members, strict=True):
        raised.setdefault(finding, set()).add(member)
    return [len(raised[f]) for f in sorted(raised)], len(set(members))


def _estimates(frame: pd.DataFrame, seed: int) -> dict[str, Any]:
    y, t = _incidences(frame)
    return scope_estimates(
        y, t, n_rationales=int(frame["rating_id"].nunique()), n_units=len(frame), seed=seed
    )


def _saturation(idea_incidences: list[tuple[list[int], int]]) -> dict[str, Any]:
    from apps.findings.analysis.estimators import _curve

    shares: list[np.ndarray] = []
    ts = np.arange(1, SATURATION_MAX + 1)
    for y, t in idea_incidences:
        if t < 2 or not y:
            continue
        total = chao2(y, t).estimate
        if not total or math.isnan(total):
            continue
        shares.append(_curve(np.asarray(y), t, ts) / total)
    if not shares:
        return {"n_ideas": 0, "curve": [], "k80": None}
    matrix = np.vstack(shares)
    mean = matrix.mean(axis=0)
    lo, hi = np.percentile(matrix, [25, 75], axis=0)
    hit = np.nonzero(mean >= SATURATION_SHARE - 1e-9)[0]
    return {
        "n_ideas": len(shares),
        "curve": [
            {"reviewers": int(t), "share": _num(m), "q25": _num(a), "q75": _num(b)}
            for t, m, a, b in zip(ts, mean, lo, hi, strict=True)
        ],
        "k80": int(ts[hit[0]]) if len(hit) else None,
    }


def units_frame(rationales: pd.DataFrame) -> pd.DataFrame:
    """One row per finding unit, carrying its rationale's columns."""
    rows = []
    # Rationales repeat ("Clear buyer."): each distinct text is split once.
    split: dict[str, list[str]] = {}
    columns = [rationales[c].tolist() for c in COLUMNS]
    for rec in zip(*columns, strict=True):
        text = str(rec[-1])
        units = split.get(text)
        if units is None:
            units = split[text] = split_units(text)
        for i, unit in enumerate(units):
            rows.append((*rec[:-1], i, unit))
    return pd.DataFrame(rows, columns=[*COLUMNS[:-1], "unit_index", "text"])


def _normalised(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return v / norms


def _used_columns(vectors: np.ndarray) -> np.ndarray:
    """The columns some unit of the domain uses. The local vectors fill a few dozen of their
    8,192 hashed buckets: every centroid, norm and product of the domain's clustering is then
    over those columns only (the zeros left out add nothing to a dot product)."""
    used = np.flatnonzero(vectors.any(axis=0))
    if len(used) == vectors.shape[1]:
        return vectors
    return np.ascontiguousarray(vectors[:, used])


def _idea_trees(group: pd.DataFrame, vectors: np.ndarray) -> list[tuple[int, list[int], Any]]:
    """One clustering tree per idea, built once and cut at every threshold."""
    return [
        (int(idea_id), list(rows), _tree(vectors[list(rows)]))
        for idea_id, rows in group.groupby("idea_id", sort=True).groups.items()
    ]


def _cluster_domain(
    group: pd.DataFrame,
    vectors: np.ndarray,
    threshold: float,
    trees: list[tuple[int, list[int], Any]],
    *,
    with_names: bool = True,
    domain_trees: dict[bytes, tuple[Any]] | None = None,
) -> tuple[pd.Series, pd.Series, dict[int, str]]:
    """Per-idea findings, then domain findings over the ideas' findings.

    Returns, per unit, its idea-level finding key ("<idea>:<n>") and its domain finding id, and
    the domain findings' names. `domain_trees` keeps the domain trees across thresholds, keyed
    by the idea findings they were built on.
    """
    n = len(group)
    idea_label = np.full(n, -1, dtype=int)  # a global index of the unit's idea finding
    memberships: list[np.ndarray] = []
    keys: list[str] = []
    for idea_id, idx, tree in trees:
        labels = _cut(tree, len(idx), threshold)
        rows = np.asarray(idx)
        for label in range(int(labels.max()) + 1 if len(idx) else 0):
            members = rows[labels == label]
            idea_label[members] = len(keys)
            keys.append(f"{idea_id}:{label}")
            memberships.append(members)
    # Neighbouring thresholds often split every idea the same way: the same idea findings have
    # the same centroids, so the domain's tree (the costly part: a centroid similarity matrix)
    # is built once and only cut again.
    cache_key = idea_label.tobytes()
    domain_tree = None if domain_trees is None else domain_trees.get(cache_key)
    if domain_tree is None:
        centroids = [vectors[members].mean(axis=0) for members in memberships]
        matrix = np.vstack(centroids) if centroids else np.zeros((0, 1))
        domain_tree = (_tree(matrix),)
        if domain_trees is not None:
            domain_trees[cache_key] = domain_tree
    domain_of_key = _cut(domain_tree[0], len(keys), threshold)
    domain_label = domain_of_key[idea_label] if n else np.zeros(0, dtype=int)
    names: dict[int, str] = {}
    if with_names:
        texts = group["text"].tolist()
        for fid in range(int(domain_label.max()) + 1 if n else 0):
            members = np.nonzero(domain_label == fid)[0]
            names[fid] = name_of([texts[i] for i in members], vectors[members])
    return (
        pd.Series([keys[i] for i in idea_label], index=group.index, dtype=object),
        pd.Series(domain_label, index=group.index),
        names,
    )


def _sweep(
    group: pd.DataFrame,
    vectors: np.ndarray,
    sweep: Sequence[float],
    trees: list[tuple[int, list[int], Any]],
    known: dict[float, tuple[pd.Series, pd.Series]] | None = None,
    domain_trees: dict[bytes, tuple[Any]] | None = None,
) -> dict[str, Any]:
    """Counts at each threshold of `sweep`; `known` holds clusterings already made (the page's
    threshold is usually one of the sweep's), which are not made again."""
    out = {}
    for t in sweep:
        if known is not None and float(t) in known:
            idea_key, domain_id = known[float(t)]
        else:
            idea_key, domain_id, _ = _cluster_domain(
                group, vectors, float(t), trees, with_names=False, domain_trees=domain_trees
            )
        out[f"{t:g}"] = {
            "idea_findings": int(idea_key.nunique()),
            "domain_findings": int(domain_id.nunique()),
        }
    return out


def compute_findings(
    rationales: pd.DataFrame,
    embed: Embed,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    sweep: Sequence[float] = SWEEP,
    ideas: set[int] | None = None,
) -> dict[str, Any]:
    """Findings and estimates for every domain of `rationales` (one source).

    Returns {"threshold", "domains": {key: {"scope", "dimensions", "saturation", "sweep",
    "findings", "ideas": {idea_id: {**estimates, "findings": [...]}}}}}. `ideas`, when given,
    limits the per-idea sections (the domain is still clustered whole, so ids agree).

    Two levels, one threshold: an idea's units are clustered into the idea's findings (what the
    idea page counts and the estimators use); the ideas' findings (their centroids) are
    clustered again into the domain's findings, so a point two ideas share is one domain
    finding and every idea finding belongs to exactly one domain finding.
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError("the similarity threshold must be in (0, 1]")
    units = units_frame(rationales)
    out: dict[str, Any] = {"threshold": threshold, "domains": {}}
    for domain, group in units.groupby("domain", sort=True):
        group = group.reset_index(drop=True)
        vectors = _used_columns(_normalised(embed(group["text"].tolist())))
        trees = _idea_trees(group, vectors)
        domain_trees: dict[bytes, tuple[Any]] = {}
        idea_key, domain_id, names = _cluster_domain(
            group, vectors, threshold, trees, domain_trees=domain_trees
        )
        group["idea_finding"] = idea_key
        group["finding"] = domain_id
        finding_rows: list[dict[str, Any]] = [
            {
                "id": int(fid),
                "name": names[int(fid)],
                "n_units": len(g),
                "n_reviewers": int(g["member"].nunique()),
                "n_ideas": int(g["idea_id"].nunique()),
                "dimensions": sorted(g["dimension"].unique().tolist()),
            }
            for fid, g in group.groupby("finding")
        ]
        finding_rows.sort(key=lambda r: (-r["n_reviewers"], -r["n_units"], r["id"]))
        idea_sections: dict[str, Any] = {}
        idea_incidences: list[tuple[list[int], int]] = []
        # Per idea, plain lists rather than a pandas group per idea and per finding: a domain
        # has hundreds of ideas, and pandas' per-group overhead was most of the run.
        idea_keys = group["idea_finding"].tolist()
        domain_ids = group["finding"].tolist()
        members = group["member"].tolist()
        rating_ids = group["rating_id"].tolist()
        dimensions = group["dimension"].tolist()
        texts = group["text"].tolist()
        rows_of_idea: dict[Any, list[int]] = {}
        for i, idea_id in enumerate(group["idea_id"].tolist()):
            rows_of_idea.setdefault(idea_id, []).append(i)
        for idea_id in sorted(rows_of_idea):
            rows = rows_of_idea[idea_id]
            y, t = _incidences_of([idea_keys[i] for i in rows], [members[i] for i in rows])
            idea_incidences.append((y, t))
            if ideas is not None and int(idea_id) not in ideas:
                continue
            section = scope_estimates(
                y,
                t,
                n_rationales=len({rating_ids[i] for i in rows}),
                n_units=len(rows),
                seed=int(idea_id),
            )
            rows_of_finding: dict[str, list[int]] = {}
            for i in rows:
                rows_of_finding.setdefault(idea_keys[i], []).append(i)
            findings: list[dict[str, Any]] = []
            for key in sorted(rows_of_finding):
                idx = rows_of_finding[key]
                findings.append(
                    {
                        "id": int(domain_ids[idx[0]]),
                        "name": name_of([texts[i] for i in idx], vectors[idx]),
                        "members": sorted({str(members[i]) for i in idx}),
                        "units": [
                            {
                                "member": str(members[i]),
                                "dimension": dimensions[i],
                                "text": texts[i],
                            }
                            for i in idx
                        ],
                    }
                )
            findings.sort(key=lambda f: (-len(f["members"]), f["name"]))
            section["findings"] = findings
            idea_sections[str(int(idea_id))] = section
        out["domains"][str(domain)] = {
            "scope": _estimates(group, seed=0),
            "dimensions": {
                str(dim): _estimates(dg, seed=0)
                for dim, dg in group.groupby("dimension", sort=True)
            },
            "saturation": _saturation(idea_incidences),
            "sweep": _sweep(
                group,
                vectors,
                sweep,
                trees,
                known={float(threshold): (idea_key, domain_id)},
                domain_trees=domain_trees,
            ),
            "findings": finding_rows,
            "ideas": idea_sections,
        }
    return out
