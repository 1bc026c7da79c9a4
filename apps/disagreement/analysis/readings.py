"""The plain-language reading of a cell: one sentence from its alpha and Jaccard, and the bars
behind it (docs/metrics-definitions.md)."""

from __future__ import annotations

# Krippendorff's own lowest bar for drawing tentative conclusions from alpha.
ALPHA_AGREE = 0.667
# Random above-median picks overlap at a Jaccard near 0.3; 0.5 is clearly beyond chance.
JACCARD_AGREE = 0.5
# A mean Jaccard over fewer reviewer pairs than this is not read as a verdict: with 4 pairs one
# odd pair moves the mean by a quarter of its own deviation.
MIN_PAIRS_FOR_VERDICT = 10

READ_AGREE = "Reviewers agree."
READ_SCALES = "Reviewers use different scales but pick similar strong ideas."
READ_DISAGREE = "Reviewers disagree on which ideas are strong."
READ_SAME_SCORES_DIFFERENT_PICKS = "Reviewers give similar scores but pick different top ideas."
READ_TOO_LITTLE = "Too few pairs to judge."
READ_SCORES_AGREE_ONLY = "Reviewers give similar scores; too few pairs to compare top picks."
READ_SCORES_DIFFER_ONLY = "Reviewers score differently; too few pairs to compare top picks."


def reading(
    alpha: float | None,
    jaccard: float | None,
    n_items: int,
    n_pairs: int,
    min_co_rated: int = 10,
    min_pairs: int = MIN_PAIRS_FOR_VERDICT,
) -> str:
    """One plain-language sentence for a cell, from its alpha and Jaccard.

    Alpha speaks only with at least ``min_co_rated`` pairable ideas, Jaccard only with at least
    ``min_pairs`` reviewer pairs; below both the cell says "Too few pairs to judge."
    """
    has_alpha = alpha is not None and n_items >= min_co_rated
    has_jaccard = jaccard is not None and n_pairs >= min_pairs
    if not has_alpha and not has_jaccard:
        return READ_TOO_LITTLE
    if not has_jaccard:
        # has_alpha holds here; the None checks only tell the type checker what it implies.
        agree = alpha is not None and alpha >= ALPHA_AGREE
        return READ_SCORES_AGREE_ONLY if agree else READ_SCORES_DIFFER_ONLY
    high_j = jaccard is not None and jaccard >= JACCARD_AGREE
    if not has_alpha:
        return READ_SCALES if high_j else READ_DISAGREE
    if alpha is not None and alpha >= ALPHA_AGREE:
        return READ_AGREE if high_j else READ_SAME_SCORES_DIFFERENT_PICKS
    return READ_SCALES if high_j else READ_DISAGREE
