"""Synthetic rating frames in the rating_frame shape, for benchmarks, tests and demos.

Reviewers work in one domain each (as ReviewerProfile.domains usually does), differ in
strictness (an offset) and in scale use, and share a latent idea quality: so fine alpha is
modest while above-median picks still overlap, the structure the paper reports.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def synthetic_frame(
    *,
    n_ratings: int = 100_000,
    n_ideas: int = 10_000,
    n_reviewers: int = 200,
    n_dimensions: int = 6,
    n_domains: int = 3,
    gated_share: float = 0.1,
    seed: int = 0,
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dims = [f"d{j}" for j in range(n_dimensions)]
    domains = [f"dom{j}" for j in range(n_domains)]
    idea_dom = np.arange(n_ideas) % n_domains
    rev_dom = np.arange(n_reviewers) % n_domains
    per_idea = max(2, round(n_ratings / (n_ideas * n_dimensions)))
    n_ideas = min(n_ideas, max(1, n_ratings // (per_idea * n_dimensions)))
    idea_dom = idea_dom[:n_ideas]

    pools = [np.flatnonzero(rev_dom == k) for k in range(n_domains)]
    idea_rows, rev_rows = [], []
    for k in range(n_domains):
        ideas_k = np.flatnonzero(idea_dom == k)
        pool = pools[k]
        take = min(per_idea, len(pool))
        picks = np.argsort(rng.random((len(ideas_k), len(pool))), axis=1)[:, :take]
        idea_rows.append(np.repeat(ideas_k, take))
        rev_rows.append(pool[picks].ravel())
    idea_of = np.concatenate(idea_rows)
    rev_of = np.concatenate(rev_rows)

    quality = rng.normal(size=(n_ideas, n_dimensions))
    offset = rng.normal(scale=0.8, size=(n_reviewers, n_dimensions))
    stretch = rng.uniform(0.5, 1.5, size=(n_reviewers, n_dimensions))
    n_pairs = len(idea_of)
    idea_col = np.repeat(idea_of, n_dimensions)
    rev_col = np.repeat(rev_of, n_dimensions)
    dim_col = np.tile(np.arange(n_dimensions), n_pairs)
    latent = (
        quality[idea_col, dim_col] * stretch[rev_col, dim_col]
        + offset[rev_col, dim_col]
        + rng.normal(scale=0.8, size=len(idea_col))
    )
    score = np.clip(np.round(3 + latent), 1, 5)
    gated = rng.random(len(score)) < gated_share
    score[gated] = np.nan
    status = np.where(gated, "gated", "scored")
    backgrounds = np.array(["technical", "business"])[(np.arange(n_reviewers) // n_domains) % 2]
    return pd.DataFrame(
        {
            "idea_id": idea_col + 1,
            "idea": pd.Categorical([f"I{j + 1}" for j in range(n_ideas)])[idea_col],
            "patent_id": idea_col + 1,
            "domain": np.array(domains)[idea_dom[idea_col]],
            "reviewer_id": rev_col + 1,
            "reviewer": np.array([f"r{j:04d}" for j in range(n_reviewers)])[rev_col],
            "background": backgrounds[rev_col],
            "dimension": np.array(dims)[dim_col],
            "score": score,
            "status": status,
            "rated_at": pd.Timestamp("2026-01-01", tz="UTC"),
        }
    )


def synthetic_scales(n_dimensions: int = 6) -> dict[str, tuple[int, int]]:
    return {f"d{j}": (1, 5) for j in range(n_dimensions)}
