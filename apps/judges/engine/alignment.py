"""Judge alignment metrics: pure functions over pandas frames, importable without Django.

Input frame ("finals"), one row per judge final prediction whose target reviewer scored the item:
  reviewer_id, idea_id, domain, dimension, kind, k, pred (float, NaN when nothing kept),
  truth (float, the reviewer's own score), reason (str), kept, discarded, failed (ints).

Definitions follow SPEC "Metrics" and paper 001 section 5:
- alignment: Krippendorff's alpha between the judge's final predictions and the target reviewer's
  scores, units = (reviewer, idea), two coders (reviewer, judge), per configuration, k, dimension:
  the *pooled* alpha (paper 001's figure), next to the *per-reviewer* alpha, the level-only
  baseline and the judge's lift over it (engine.level, where they are defined);
- coarse alignment at the largest k, defined under ties (top_half_membership): each item's
  membership of a series' top half is 1 above the median, 0 below, and the items tied at the
  median share the rest of n / 2; Jaccard = sum of min / sum of max of the two memberships,
  top-half overlap = sum of min / the reviewer's n / 2. Unrelated series sit at chance (about
  0.33 and 0.5), never at 100 % for a tie block. Averaged over reviewers;
  a reviewer whose judge predictions (or own scores) are constant or nearly so (one value on
  >= 90 % of the items) has no such sets: their coarse metrics are undefined, with the reason;
- coverage: targets where the judge kept a prediction over all targets (alpha is over those);
- verdict: "well" / "partly" / "not_yet" from alpha, its bootstrap interval, n and coverage
  (thresholds below, documented in docs/judges.md);
- coverage-accuracy: as the confidence threshold moves, the share of predictions kept and the
  share of those exactly right;
- discard rate: predictions discarded for low confidence over predictions that returned a score;
- reasoning structure: per reviewer pair with shared items, agreement (mean alpha over shared
  dimensions) against the cosine similarity of their judges' reasons on the same items.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from apps.disagreement.analysis.alpha import krippendorff_alpha as _shared_alpha
from apps.disagreement.analysis.bootstrap import bootstrap_alpha as _bootstrap_alpha
from apps.disagreement.analysis.coarse import jaccard as _jaccard
from apps.judges.engine import level as levels

KIND_ORDER = ["zero_shot", "aggregate", "personalized"]


def _clean(x: float | np.floating | None) -> float | None:
    if x is None:
        return None
    try:
        xf = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(xf) or math.isinf(xf) else xf


def _ordinal_alpha_fallback(data: np.ndarray, values: list[float] | None) -> float:
    """Krippendorff's ordinal alpha (coincidence matrix); only if the shared one is absent."""
    vals = sorted(values) if values else sorted({v for v in data.flatten() if not np.isnan(v)})
    index = {v: i for i, v in enumerate(vals)}
    m = len(vals)
    if m < 2:
        return float("nan")
    o = np.zeros((m, m))
    for unit in data.T:
        present = [v for v in unit if not np.isnan(v)]
        mu = len(present)
        if mu < 2:
            continue
        for a in range(mu):
            for b in range(mu):
                if a != b:
                    o[index[present[a]], index[present[b]]] += 1.0 / (mu - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n <= 1:
        return float("nan")
    delta = np.zeros((m, m))
    for c in range(m):
        for k in range(m):
            lo, hi = min(c, k), max(c, k)
            delta[c, k] = (n_c[lo : hi + 1].sum() - (n_c[c] + n_c[k]) / 2.0) ** 2
    d_o = (o * delta).sum()
    d_e = (np.outer(n_c, n_c) * delta).sum()
    if d_e == 0:
        return float("nan")
    return float(1.0 - (n - 1) * d_o / d_e)


def alpha(
    data: np.ndarray, *, values: list[float] | None = None, level: str = "ordinal"
) -> float | None:
    """Alpha over a coders x units matrix (NaN = missing); None when undefined."""
    if data.size == 0:
        return None
    try:
        if _shared_alpha is not None:
            result = _shared_alpha(data, level=level, values=values)
        else:
            result = _ordinal_alpha_fallback(data, values)
    except (ValueError, ZeroDivisionError):
        return None
    return _clean(result)


def jaccard(a: set, b: set) -> float | None:
    if _jaccard is not None:
        return _clean(_jaccard(a, b))
    union = a | b
    return None if not union else len(a & b) / len(union)


def _values(scales: dict[str, tuple[int, int]], dimension: str) -> list[float] | None:
    if dimension not in scales:
        return None
    lo, hi = scales[dimension]
    return [float(v) for v in range(lo, hi + 1)]


def judge_vs_truth_alpha(
    group: pd.DataFrame, values: list[float] | None
) -> tuple[float | None, int]:
    """Alpha between predictions and truths of one group; n = items where the judge kept a score."""
    g = group.dropna(subset=["truth"])
    data = np.vstack([g["truth"].to_numpy(float), g["pred"].to_numpy(float)])
    n = int(g["pred"].notna().sum())
    return (alpha(data, values=values) if n >= 2 else None), n


def alignment_curve(
    finals: pd.DataFrame, *, scales: dict[str, tuple[int, int]], by_reviewer: bool = False
) -> list[dict[str, Any]]:
    """Alpha per (kind, k, dimension) [and reviewer]: the series behind paper 001's Figure 2."""
    if finals.empty:
        return []
    keys = ["dimension", "kind", "k"] + (["reviewer_id"] if by_reviewer else [])
    rows = []
    for key, group in finals.groupby(keys, sort=True):
        values = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        a, n = judge_vs_truth_alpha(group, _values(scales, values["dimension"]))
        values["k"] = int(values["k"])
        if "reviewer_id" in values:
            values["reviewer_id"] = int(values["reviewer_id"])
        kept, discarded = int(group["kept"].sum()), int(group["discarded"].sum())
        n_targets = int(group["truth"].notna().sum())
        vals = _values(scales, values["dimension"])
        within, n_reviewers = levels.per_reviewer_figure(levels.reviewer_alphas(group, vals, alpha))
        rows.append(
            {
                **values,
                # Pooled: every reviewer's targets in one table (paper 001's figure); it
                # rewards matching each reviewer's level. Per-reviewer: the mean of each
                # reviewer's own alpha (engine.level), the figure verdicts and charts use.
                "alpha": a,
                "within_alpha": within,
                "n_reviewers": n_reviewers,
                **_baseline(group, vals),
                "n": n,
                "n_targets": n_targets,
                # Share of targets where the judge kept a prediction: alpha is over these only.
                "coverage": (n / n_targets) if n_targets else None,
                "discard_rate": (discarded / (kept + discarded)) if kept + discarded else None,
            }
        )
    rows.sort(key=lambda r: (r["dimension"], _kind_pos(r["kind"]), r["k"]))
    return rows


def _baseline(group: pd.DataFrame, values: list[float] | None, n_boot: int = levels.N_BOOT) -> dict:
    """Level-only baseline, lift and its interval on the group's targets (engine.level)."""
    if "base" not in group.columns:
        figures = levels.paired_alphas(np.zeros(0), np.zeros(0), np.zeros(0), values, n_boot=n_boot)
    else:
        # Units in a fixed order, so the bootstrap draws the same resamples whatever order
        # the frame came in (a reviewer's section and their own report agree).
        g = group.dropna(subset=["truth"])
        keys = [c for c in ("reviewer_id", "idea_id") if c in g.columns]
        if keys:
            g = g.sort_values(keys, kind="stable")
        figures = levels.paired_alphas(
            g["truth"].to_numpy(float),
            g["pred"].to_numpy(float),
            g["base"].to_numpy(float),
            values,
            n_boot=n_boot,
        )
    figures["adds_nothing"] = levels.adds_nothing(figures["lift"], figures["lift_low"])
    figures["lift_text"] = levels.lift_sentence(
        figures["lift"], figures["lift_low"], figures["lift_high"]
    )
    return figures


def _kind_pos(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


# A score series is "nearly constant" when one value covers at least this share of its items:
# its above-median set is then empty or a handful of items, and set overlaps measure nothing.
NEAR_CONSTANT_SHARE = 0.9


def constant_reason(values: pd.Series | np.ndarray, *, who: str) -> str | None:
    """Why a score series cannot carry a median split, or None when it can.

    `who` names the series in the sentence ("the judge's predictions", "the reviewer's scores").
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) < 2:
        return f"{who} cover fewer than 2 items"
    levels, counts = np.unique(v, return_counts=True)
    top = float(levels[counts.argmax()])
    if len(levels) == 1:
        return f"{who} are {top:g} for every item ({len(v)}), so no item is above the median"
    share = float(counts.max()) / len(v)
    if share >= NEAR_CONSTANT_SHARE:
        return (
            f"{who} are {top:g} for {share:.0%} of the items, so the above-median set is "
            "empty or trivial"
        )
    return None


def coarse_pair(
    truth: pd.Series | np.ndarray, pred: pd.Series | np.ndarray, items: pd.Series | np.ndarray
) -> tuple[float | None, float | None, str | None]:
    """(Jaccard, top-50 % overlap, reason) for one reviewer: both None with the reason when either
    series is (nearly) constant, because then the sets say nothing that alpha does not."""
    t, p, ids = (np.asarray(x) for x in (truth, pred, items))
    t, p = t.astype(float), p.astype(float)
    reason = constant_reason(p, who="the judge's predictions") or constant_reason(
        t, who="the reviewer's scores"
    )
    if reason:
        return None, None, reason
    del ids  # memberships are aligned by position
    mt, mp = top_half_membership(t), top_half_membership(p)
    both = np.minimum(mt, mp).sum()
    either = np.maximum(mt, mp).sum()
    j = float(both / either) if either > 0 else None
    overlap = float(both / mt.sum()) if mt.sum() > 0 else None
    return j, overlap, None


def top_half_membership(values: np.ndarray) -> np.ndarray:
    """Each item's share of membership in the top half, defined under ties: items above the
    median 1, below 0, and the items tied at the median share what is left of n / 2 equally.
    So every series has exactly n / 2 of membership, a constant series gives 0.5 to every
    item, and overlaps of two series are at chance (0.5) when they are unrelated; the old
    cut (at or above the median) put a whole tie block in the top half and gave 100 %."""
    v = np.asarray(values, dtype=float)
    n = len(v)
    median = float(np.median(v))
    above = v > median
    at = v == median
    out = above.astype(float)
    if at.any():
        out[at] = min(1.0, max(0.0, (n / 2 - above.sum()) / at.sum()))
    return out


def _undefined_note(reasons: list[str], n_total: int) -> str | None:
    if not reasons:
        return None
    if len(reasons) == n_total:
        scope = f"every reviewer ({n_total})" if n_total > 1 else "the reviewer"
        return f"Undefined for {scope}: {reasons[0]}."
    return f"Undefined for {len(reasons)} of {n_total} reviewers (for example, {reasons[0]})."


def coarse_alignment(
    finals: pd.DataFrame, *, k: int | None = None, by_reviewer: bool = False
) -> list[dict[str, Any]]:
    """Above-median Jaccard and top-50 % overlap per (kind, dimension) at k (default: largest k).

    A reviewer whose judge predictions (or own scores) are constant or nearly so contributes no
    number but a reason; a row whose reviewers are all such says "undefined" with the reason
    instead of a figure that would contradict alpha.
    """
    if finals.empty:
        return []
    rows = []
    keys = ["dimension", "kind"] + (["reviewer_id"] if by_reviewer else [])
    for key, group in finals.groupby(keys, sort=True):
        values = dict(zip(keys, key, strict=True))
        use_k = int(group["k"].max()) if k is None else k
        g = group[(group["k"] == use_k)].dropna(subset=["pred", "truth"])
        jaccards, overlaps, reasons = [], [], []
        for _, rg in g.groupby("reviewer_id"):
            j, overlap, reason = coarse_pair(
                rg["truth"].to_numpy(), rg["pred"].to_numpy(), rg["idea_id"].to_numpy()
            )
            if reason:
                reasons.append(reason)
                continue
            if j is not None:
                jaccards.append(j)
            if overlap is not None:
                overlaps.append(overlap)
        n_reviewers = int(g["reviewer_id"].nunique())
        note = _undefined_note(reasons, n_reviewers)
        if n_reviewers == 0:
            note = "Undefined: the judge kept no prediction at this k."
        row = {
            **values,
            "k": use_k,
            "jaccard": _clean(np.mean(jaccards)) if jaccards else None,
            "top50_overlap": _clean(np.mean(overlaps)) if overlaps else None,
            "n_reviewers": len(overlaps),
            "n_undefined": len(reasons),
            "undefined_reason": note,
        }
        if by_reviewer:
            row["reviewer_id"] = int(values["reviewer_id"])
        rows.append(row)
    rows.sort(key=lambda r: (r["dimension"], _kind_pos(r["kind"])))
    return rows


# ---------------------------------------------------------------------------- verdicts

# A judge "reproduces" a reviewer when its alpha reaches Krippendorff's threshold for tentative
# conclusions (0.667) with an interval that stays clear of chance-level agreement, over enough
# items and most of them. See docs/judges.md, "Verdicts".
VERDICT_MIN_N = levels.MIN_N
VERDICT_WELL_ALPHA = 0.667
VERDICT_WELL_LOWER = 0.4
VERDICT_PARTLY_ALPHA = 0.4
VERDICT_MIN_COVERAGE = 0.8
VERDICT_LABELS = {"well": "reproduces well", "partly": "partly", "not_yet": "not yet"}


def verdict(
    *,
    alpha_value: float | None,
    low: float | None,
    high: float | None,
    n: int,
    coverage: float,
    lift: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One plain verdict ("well", "partly", "not_yet") with the sentence that justifies it.

    ``alpha_value`` is the per-reviewer alpha (one reviewer's targets); ``lift`` the judge's
    lift over the level-only baseline on them (engine.level): a judge that does not beat the
    baseline is "not yet" whatever its alpha, and says it adds nothing."""
    base = {"alpha": alpha_value, "low": low, "high": high, "n": n, "coverage": coverage}
    if lift is not None:
        base.update(
            {
                key: lift.get(key)
                for key in ("baseline_alpha", "lift", "lift_low", "lift_high", "adds_nothing")
            }
        )
    if n < VERDICT_MIN_N or alpha_value is None:
        why = (
            f"only {n} kept prediction{'s' if n != 1 else ''} (at least {VERDICT_MIN_N} needed)"
            if n < VERDICT_MIN_N
            else "alpha is undefined (the scores do not vary)"
        )
        return {**base, "level": "not_yet", "label": VERDICT_LABELS["not_yet"], "reason": why}
    if (
        alpha_value >= VERDICT_WELL_ALPHA
        and low is not None
        and low >= VERDICT_WELL_LOWER
        and coverage >= VERDICT_MIN_COVERAGE
    ):
        level, why = "well", f"alpha and its interval above {VERDICT_WELL_LOWER}"
    elif alpha_value >= VERDICT_PARTLY_ALPHA:
        level = "partly"
        if coverage < VERDICT_MIN_COVERAGE:
            why = f"keeps a prediction for only {coverage:.0%} of the items"
        elif alpha_value >= VERDICT_WELL_ALPHA and low is None:
            why = "its interval is undefined"
        elif alpha_value >= VERDICT_WELL_ALPHA:
            why = f"the interval reaches down to {low:.2f}"
        else:
            why = f"alpha below {VERDICT_WELL_ALPHA}"
    else:
        level, why = "not_yet", f"alpha below {VERDICT_PARTLY_ALPHA}"
    if lift is not None and lift.get("adds_nothing"):
        level = "not_yet"
        why = levels.lift_sentence(lift.get("lift"), lift.get("lift_low"), lift.get("lift_high"))
    return {**base, "level": level, "label": VERDICT_LABELS[level], "reason": why}


def reviewer_verdicts(
    finals: pd.DataFrame,
    *,
    scales: dict[str, tuple[int, int]],
    kind: str = "personalized",
    n_boot: int = 500,
) -> list[dict[str, Any]]:
    """Per reviewer and dimension: the verdict on their `kind` judge at its largest k."""
    g = finals[finals["kind"] == kind].dropna(subset=["truth"])
    if g.empty:
        return []
    g = g[g["k"] == g.groupby(["reviewer_id", "dimension"])["k"].transform("max")]
    out = []
    for (reviewer_id, dimension), rg in g.groupby(["reviewer_id", "dimension"], sort=True):
        values = _values(scales, str(dimension))
        a, n = judge_vs_truth_alpha(rg, values)
        low = high = None
        if a is not None and n >= VERDICT_MIN_N and _bootstrap_alpha is not None:
            data = np.vstack([rg["truth"].to_numpy(float), rg["pred"].to_numpy(float)])
            lo_, hi_ = _bootstrap_alpha(data, "ordinal", values, n_boot=n_boot, seed=0)
            low, high = _clean(lo_), _clean(hi_)
        coverage = n / len(rg) if len(rg) else 0.0
        lift = _baseline(rg, values) if n >= VERDICT_MIN_N else None
        out.append(
            {
                "reviewer_id": int(reviewer_id),
                "dimension": str(dimension),
                "kind": kind,
                "k": int(rg["k"].iloc[0]),
                **verdict(alpha_value=a, low=low, high=high, n=n, coverage=coverage, lift=lift),
            }
        )
    return out


# ------------------------------------------------------------------ coverage and accuracy

COVERAGE_THRESHOLDS = list(range(0, 101, 5))


def coverage_accuracy(
    predictions: pd.DataFrame, *, thresholds: list[int] | None = None
) -> list[dict[str, Any]]:
    """The coverage-accuracy curve of one configuration as the confidence threshold moves.

    predictions: one row per seed prediction with `confidence` (NaN when the call failed) and
    `correct` (bool: the score equals the reviewer's own). At threshold c, coverage is the
    share of predictions with confidence >= c, accuracy the share of those exactly right
    (None when nothing is kept).
    """
    thresholds = COVERAGE_THRESHOLDS if thresholds is None else thresholds
    total = len(predictions)
    if total == 0:
        return []
    conf = predictions["confidence"].to_numpy(float)
    correct = predictions["correct"].to_numpy(bool)
    points = []
    for c in thresholds:
        kept = ~np.isnan(conf) & (conf >= c)
        n_kept = int(kept.sum())
        points.append(
            {
                "threshold": int(c),
                "coverage": n_kept / total,
                "accuracy": float(correct[kept].mean()) if n_kept else None,
                "n_kept": n_kept,
            }
        )
    return points


def case_idea_ids(finals: pd.DataFrame, *, limit: int = 6) -> list[int]:
    """Ideas where the personalized and aggregate judges disagreed most (Appendix F candidates)."""
    if finals.empty:
        return []
    top = finals[finals["k"] == finals.groupby("kind")["k"].transform("max")]
    wide = top.pivot_table(
        index=["idea_id", "reviewer_id", "dimension"], columns="kind", values="pred"
    )
    if "personalized" not in wide or "aggregate" not in wide:
        return []
    gap = (wide["personalized"] - wide["aggregate"]).abs().dropna().sort_values(ascending=False)
    return list(dict.fromkeys(int(i) for i, _, _ in gap.index[: limit * 5]))[:limit]


def discard_rates(predictions: pd.DataFrame) -> list[dict[str, Any]]:
    """Share of scored predictions discarded for low confidence, per domain and dimension.

    predictions: one row per seed prediction with domain, dimension, kind, scored (bool) and
    discarded (bool).
    """
    if predictions.empty:
        return []
    rows = []
    for (domain, dimension), g in predictions.groupby(["domain", "dimension"], sort=True):
        scored = int(g["scored"].sum())
        discarded = int(g["discarded"].sum())
        rows.append(
            {
                "domain": domain,
                "dimension": dimension,
                "n_predictions": int(len(g)),
                "n_scored": scored,
                "n_discarded": discarded,
                "n_failed": int((~g["scored"]).sum()),
                "discard_rate": (discarded / scored) if scored else None,
            }
        )
    return rows


def pearson(x: Iterable[float], y: Iterable[float]) -> float | None:
    xa, ya = np.asarray(list(x), float), np.asarray(list(y), float)
    if len(xa) < 3 or np.std(xa) == 0 or np.std(ya) == 0:
        return None
    return _clean(np.corrcoef(xa, ya)[0, 1])


def reasoning_structure(
    truth: pd.DataFrame,
    finals: pd.DataFrame,
    *,
    scales: dict[str, tuple[int, int]],
    embed: Callable[[list[str]], np.ndarray],
    k: int | None = None,
    min_shared: int = 2,
) -> list[dict[str, Any]]:
    """Per configuration: points (reviewer pair, agreement, reason similarity) and Pearson r.

    truth: reviewer_id, reviewer, idea_id, dimension, score (scored ratings only).
    finals: as in the module doc; reasons at the largest k (or `k`) of each kind.
    Agreement of a pair = mean over shared dimensions (>= min_shared shared items) of their alpha.
    Similarity = mean cosine between the two reviewers' judges' reasons on the same shared items.
    """
    if truth.empty or finals.empty:
        return []
    names = truth.drop_duplicates("reviewer_id").set_index("reviewer_id")["reviewer"].to_dict()
    pivot = truth.pivot_table(index=["idea_id", "dimension"], columns="reviewer_id", values="score")
    reviewers = sorted(pivot.columns)
    pairs: dict[tuple[int, int], tuple[float, list[tuple[int, str]]]] = {}
    for i, a in enumerate(reviewers):
        for b in reviewers[i + 1 :]:
            both = pivot[[a, b]].dropna()
            if both.empty:
                continue
            alphas = []
            for dimension, dg in both.groupby(level="dimension"):
                if len(dg) < min_shared:
                    continue
                al = alpha(dg.to_numpy(float).T, values=_values(scales, str(dimension)))
                if al is not None:
                    alphas.append(al)
            if alphas:
                pairs[(a, b)] = (
                    float(np.mean(alphas)),
                    [(int(i_), str(d)) for i_, d in both.index],
                )
    if not pairs:
        return []
    out = []
    for kind, kg in finals.groupby("kind", sort=False):
        use_k = int(kg["k"].max()) if k is None else k
        # Only kept predictions carry a reason worth comparing: a configuration whose predictions
        # were all discarded gets no scatter at all (the page says why).
        kg = kg[(kg["k"] == use_k) & kg["pred"].notna() & (kg["reason"].fillna("") != "")]
        reasons = {
            (int(r.reviewer_id), int(r.idea_id), str(r.dimension)): str(r.reason)
            for r in kg.itertuples()
        }
        texts = sorted(set(reasons.values()))
        if len(texts) < 2:
            continue
        vectors = embed(texts)
        row_of = {t: i for i, t in enumerate(texts)}
        points = []
        for (a, b), (agreement, items) in pairs.items():
            sims = []
            for idea_id, dimension in items:
                ra, rb = reasons.get((a, idea_id, dimension)), reasons.get((b, idea_id, dimension))
                if ra is None or rb is None:
                    continue
                sims.append(float(vectors[row_of[ra]] @ vectors[row_of[rb]]))
            if sims:
                points.append(
                    {
                        "reviewer_a": names.get(a, str(a)),
                        "reviewer_b": names.get(b, str(b)),
                        "agreement": agreement,
                        "similarity": float(np.mean(sims)),
                        "n_items": len(sims),
                    }
                )
        out.append(
            {
                "kind": kind,
                "k": use_k,
                "points": points,
                "pearson_r": pearson(
                    [p["agreement"] for p in points], [p["similarity"] for p in points]
                ),
            }
        )
    out.sort(key=lambda r: _kind_pos(r["kind"]))
    return out


def sample_points(points: list[dict[str, Any]], *, limit: int) -> list[dict[str, Any]]:
    """At most `limit` points, evenly spaced along agreement: a readable scatter of the same
    shape (the statistics stay computed over every point)."""
    if len(points) <= limit:
        return points
    ordered = sorted(points, key=lambda p: (p["agreement"], p["reviewer_a"], p["reviewer_b"]))
    picks = np.linspace(0, len(ordered) - 1, limit).round().astype(int)
    return [ordered[i] for i in dict.fromkeys(int(i) for i in picks)]
