"""compute_metrics: every disagreement figure the dashboards show, in one pass over a frame.

The frame is turned into integer codes once (reviewer, idea, dimension, domain); every
figure is then a handful of ``np.bincount`` calls over those codes. Reviewer pairs are built
once per dimension by a vectorised self-join on the idea, and every scope (domain or
"__all__") and background reuses them. One bootstrap weight matrix over all ideas serves every
cell (see bootstrap.py and docs/metrics-definitions.md).

The steps live apart: coding.py codes the frame and builds each dimension's rows and pairs,
scopes.py computes one dimension's figures in one scope, readings.py words a cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .alpha import check_level
from .bootstrap import _BLOCK, percentile_interval, resample_weights
from .categories import analysis_scores, category_report
from .coding import dimension_rows, encode
from .contested import contested_ideas
from .scopes import Sections, _num, scope_figures

REQUIRED_COLUMNS = (
    "idea_id",
    "idea",
    "domain",
    "reviewer_id",
    "reviewer",
    "background",
    "dimension",
    "score",
)


def compute_metrics(
    frame: pd.DataFrame,
    *,
    scales: Mapping[str, tuple[int, int]] | None = None,
    level: str = "ordinal",
    n_boot: int = 1000,
    seed: int = 0,
    min_co_rated: int = 10,
    top_contested: int = 200,
    categories: Mapping[str, Sequence[float]] | None = None,
    include_categories: bool = False,
) -> dict:
    """All disagreement metrics for a rating frame (see METRICS_SCHEMA / docs).

    ``categories`` ({dimension: [values]}, optional) lists score values that are categories
    rather than grades (PBIG: 0 = "not a B2B product" on need_validity and market_size). By
    default those scores are left out of every ordinal figure like gated ones, and the
    ``categories`` section reports how many there were and how often reviewers split between
    the category and a grade on the same idea. ``include_categories=True`` keeps them as the
    lowest point of the scale (the paper's Table 3); the section is reported either way.

    The steps: code the frame (coding.py); per dimension, its rows and reviewer pairs; per
    scope (each domain, then every domain), the reviewers' strictness, the pairs' agreement and
    the cells per background; then one bootstrap for every cell's interval, the contested ideas
    and the category report.
    """
    check_level(level)
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"rating frame is missing column(s): {', '.join(missing)}")
    scales = dict(scales or {})
    given, score = analysis_scores(
        frame, categories=categories, include_categories=include_categories
    )
    scored = np.isfinite(score)
    c = encode(frame, scales)
    out = Sections()
    for d in range(len(c.dims)):
        rows = dimension_rows(c, d, score, scored)
        for scope, k in rows.scopes:
            scope_figures(c, rows, scope, k, out, scales, level, min_co_rated, n_boot)

    _bootstrap_cells(out.boot_jobs, c.n_idea, n_boot, seed)
    contested = contested_ideas(
        c.ideas, c.dims, c.ic, c.rc, c.dc, score, scored, c.n_rev, top_contested
    )
    category_section = category_report(
        given,
        ideas=c.ideas,
        dims=c.dims,
        ic=c.ic,
        dc=c.dc,
        idea_dom=c.idea_dom,
        domains=c.domains,
        categories=categories or {},
        top=top_contested,
    )
    return {
        "level": level,
        "categories_included": bool(include_categories),
        "backgrounds": c.groups[1:],
        "n_ratings": int(len(frame)),
        "n_scored": int(scored.sum()),
        "n_ideas": int(c.n_idea),
        "n_reviewers": int(c.n_rev),
        "cells": out.cells,
        "strictness": out.strictness,
        "strictness_spread": out.spread,
        "pairwise": out.pairwise,
        "contested": contested,
        "panel": out.panel,
        "categories": category_section,
    }


def _bootstrap_cells(jobs, n_idea: int, n_boot: int, seed: int) -> None:
    """Fill ci_low/ci_high of every job's cell from one shared set of idea resamples.

    Cells over the same ideas (same scope) are stacked into one matrix so each block of
    resample weights is read once per scope: one BLAS product instead of one per cell.
    """
    if not jobs or n_boot <= 0 or n_idea == 0:
        return
    rng = np.random.default_rng(seed)
    samples = [np.empty(n_boot) for _ in jobs]
    groups: dict[tuple[int, int], list[int]] = {}
    for j, (_, _, c0, c1) in enumerate(jobs):
        groups.setdefault((c0, c1), []).append(j)
    stacked = {}
    for span, members in groups.items():
        widths = [jobs[j][1].columns.shape[1] for j in members]
        edges = np.r_[0, np.cumsum(widths)]
        stacked[span] = (np.hstack([jobs[j][1].columns for j in members]), edges)
    for start in range(0, n_boot, _BLOCK):
        size = min(_BLOCK, n_boot - start)
        w = resample_weights(n_idea, size, rng)
        for (c0, c1), members in groups.items():
            matrix, edges = stacked[(c0, c1)]
            sums = np.ascontiguousarray(w[:, c0:c1]) @ matrix
            for pos, j in enumerate(members):
                part = sums[:, edges[pos] : edges[pos + 1]]
                samples[j][start : start + size] = jobs[j][1].alphas_from_sums(part)
    for arr, (cell, _, _, _) in zip(samples, jobs, strict=True):
        lo, hi = percentile_interval(arr)
        cell["fine"]["ci_low"], cell["fine"]["ci_high"] = _num(lo), _num(hi)
