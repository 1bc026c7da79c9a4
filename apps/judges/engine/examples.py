"""Few-shot example selection (SPEC "Judges"; paper 001 section 5.1).

Rules: same domain and dimension as the target; the idea is grounded in a different patent than
the target idea (so no patent is both target and example) and is never the target idea itself;
"personalized" keeps only the target reviewer's ratings, "aggregate" only other reviewers',
"zero_shot" takes none. k examples are drawn without replacement, reproducibly from the seed.

How the draw works: every candidate rating gets a priority sha256(f"{seed}:{rating_id}"); the k
eligible candidates with the smallest priorities are taken, in priority order. Ordering by
independent hash keys is a uniform random permutation, so this is plain sampling without
replacement, and it has two useful properties beyond reproducibility:
- it does not depend on the pool's row order or on unrelated rows: adding a rating to the pool
  changes a selection only if the new rating itself wins a place;
- targets whose patent does not appear among the drawn examples get the SAME example list, so
  their prompts share a byte-identical prefix that providers can cache.
"""

from __future__ import annotations

import hashlib

import pandas as pd

KINDS = ("zero_shot", "aggregate", "personalized")
POOL_COLUMNS = ("rating_id", "idea_id", "patent_id", "reviewer_id", "domain", "dimension", "score")


def _priority(seed: int, rating_id: int) -> int:
    digest = hashlib.sha256(f"{int(seed)}:{int(rating_id)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def select_examples(
    pool: pd.DataFrame,
    *,
    kind: str,
    target_reviewer_id: int,
    target_idea_id: int,
    target_patent_id: int,
    domain: str,
    dimension: str,
    k: int,
    seed: int,
) -> list[int]:
    """Return the rating ids of the examples for one target (see module docstring)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if k < 0:
        raise ValueError(f"k must be 0 or more; got {k}")
    if kind == "zero_shot" or k == 0:
        return []
    missing = [c for c in POOL_COLUMNS if c not in pool.columns]
    if missing:
        raise ValueError(f"example pool lacks column(s): {', '.join(missing)}")

    eligible = pool[
        (pool["domain"] == domain)
        & (pool["dimension"] == dimension)
        & (pool["patent_id"] != target_patent_id)
        & (pool["idea_id"] != target_idea_id)
        & pool["score"].notna()
    ]
    if kind == "personalized":
        eligible = eligible[eligible["reviewer_id"] == target_reviewer_id]
    else:
        eligible = eligible[eligible["reviewer_id"] != target_reviewer_id]
    if eligible.empty:
        return []

    ids = sorted({int(r) for r in eligible["rating_id"]})
    ranked = sorted(ids, key=lambda rid: (_priority(seed, rid), rid))
    return ranked[:k]
