"""Pure disagreement analysis over pandas/numpy (no Django): see docs/metrics-definitions.md."""

from .alpha import LEVELS, alpha_from_counts, alpha_from_long, krippendorff_alpha
from .bootstrap import bootstrap_alpha
from .coarse import above_median_flags, above_median_sets, coarse_agreement, jaccard
from .metrics import compute_metrics
from .panel import icc1, icc1_from_counts, k_needed, reliability_curve, spearman_brown
from .readings import reading
from .strictness import reviewer_strictness, standardise_within, strictness_spread

__all__ = [
    "LEVELS",
    "above_median_flags",
    "above_median_sets",
    "alpha_from_counts",
    "alpha_from_long",
    "bootstrap_alpha",
    "coarse_agreement",
    "compute_metrics",
    "icc1",
    "icc1_from_counts",
    "jaccard",
    "k_needed",
    "krippendorff_alpha",
    "reading",
    "reliability_curve",
    "reviewer_strictness",
    "spearman_brown",
    "standardise_within",
    "strictness_spread",
]
