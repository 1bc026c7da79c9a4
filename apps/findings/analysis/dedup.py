"""De-duplicating finding units into distinct findings.

Units are embedded (rows L2-normalised) and grouped by complete-linkage agglomerative clustering
on cosine similarity: two units share a finding only if every pair of units in the finding is at
least `threshold` similar. Complete linkage is chosen over single linkage on purpose: single
linkage chains "humidity drift" -> "humidity and temperature" -> "temperature limits" into one
finding, the failure POTATO's near-duplicate docs warn about. The threshold is a setting
(FINDINGS_SIMILARITY_THRESHOLD, documented in docs/metrics.md); `counts_by_threshold` re-cuts the
same tree at other thresholds, so the page can show how the counts move with it at no extra cost.

Each finding is named by its most typical phrasing: the unit with the highest mean similarity to
the other units of the finding (the medoid); ties go to the shorter, then the earlier unit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

DEFAULT_THRESHOLD = 0.5
# _similarity: a matrix of at least this many rows with fewer than this share of non-zeros is
# multiplied as a sparse one.
SPARSE_FROM_ROWS = 64
SPARSE_BELOW_DENSITY = 0.05

try:
    # The C routine behind fcluster(criterion="distance"). fcluster first re-validates the
    # linkage in Python, which cost more than the cut itself: a domain's hundreds of idea trees
    # are cut at eight thresholds, and every tree here comes from scipy's own `linkage`.
    from scipy.cluster import _hierarchy
except ImportError:  # pragma: no cover - a scipy without it: the public path, same labels
    _hierarchy = None


def _tree(vectors: np.ndarray) -> np.ndarray | None:
    n = len(vectors)
    if n < 2:
        return None
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    v = v / norms
    sim = np.clip(_similarity(v).astype(np.float64), -1.0, 1.0)
    dist = 1.0 - sim
    np.fill_diagonal(dist, 0.0)
    dist = np.clip((dist + dist.T) / 2, 0.0, 2.0)
    return linkage(squareform(dist, checks=False), method="complete")


def _similarity(v: np.ndarray) -> np.ndarray:
    """v v' of normalised rows. A domain's tree joins thousands of idea findings, and the local
    vectors fill a few dozen of their 8,192 hashed buckets: multiplied as a sparse matrix, the
    product skips the zeros (at a million ratings the dense products were a quarter of the
    findings job). Small matrices, and dense ones (an embedding endpoint's), stay dense."""
    if len(v) >= SPARSE_FROM_ROWS and np.count_nonzero(v) < SPARSE_BELOW_DENSITY * v.size:
        rows = sparse.csr_matrix(v)
        return np.asarray((rows @ rows.T).toarray())
    return v @ v.T


def _cut(tree: np.ndarray | None, n: int, threshold: float) -> np.ndarray:
    if tree is None:
        return np.zeros(n, dtype=int)
    labels = _flat_clusters(tree, 1.0 - threshold + 1e-9)
    # Renumber in order of first appearance so labels are stable across runs.
    order: dict[int, int] = {}
    return np.array([order.setdefault(int(x), len(order)) for x in labels], dtype=int)


def _flat_clusters(tree: np.ndarray, distance: float) -> np.ndarray:
    """fcluster(tree, t=distance, criterion="distance") without re-validating `tree`."""
    if _hierarchy is None:
        return np.asarray(fcluster(tree, t=distance, criterion="distance"))
    n = tree.shape[0] + 1
    labels = np.zeros((n,), dtype="i")
    _hierarchy.cluster_dist(
        np.ascontiguousarray(tree, dtype=np.float64), labels, float(distance), n
    )
    return labels


def cluster_units(vectors: np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> np.ndarray:
    """A finding label (0, 1, ...) per unit; units share one only above `threshold` pairwise."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError("the similarity threshold must be in (0, 1]")
    return _cut(_tree(vectors), len(vectors), threshold)


def counts_by_threshold(vectors: np.ndarray, thresholds: Sequence[float]) -> dict[float, int]:
    """Distinct findings at each threshold, from one clustering tree."""
    tree = _tree(vectors)
    n = len(vectors)
    return {float(t): (int(_cut(tree, n, float(t)).max()) + 1 if n else 0) for t in thresholds}


def name_of(texts: Sequence[str], vectors: np.ndarray) -> str:
    """The most typical phrasing of one finding's units (the medoid)."""
    if len(texts) == 1:
        return texts[0]
    v = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    v = v / norms
    # Each unit's summed similarity to all units is its dot product with their sum: the medoid
    # without the n x n matrix (a finding may hold tens of thousands of units).
    mean_sim = v @ v.sum(axis=0)
    best = min(range(len(texts)), key=lambda i: (-round(float(mean_sim[i]), 9), len(texts[i]), i))
    return texts[best]
