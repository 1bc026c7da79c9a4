"""The pure core of findings: unit splitting, de-duplication and the richness estimators.

Importable and tested without Django (numpy, scipy and pandas only).
"""

from apps.findings.analysis.compute import compute_findings, scope_estimates
from apps.findings.analysis.dedup import DEFAULT_THRESHOLD, cluster_units, counts_by_threshold
from apps.findings.analysis.estimators import (
    chao2,
    coverage,
    discovery_curve,
    expected_new,
    expected_richness,
    reviewers_for_share,
)
from apps.findings.analysis.units import split_units

__all__ = [
    "DEFAULT_THRESHOLD",
    "chao2",
    "cluster_units",
    "compute_findings",
    "counts_by_threshold",
    "coverage",
    "discovery_curve",
    "expected_new",
    "expected_richness",
    "reviewers_for_share",
    "scope_estimates",
    "split_units",
]
