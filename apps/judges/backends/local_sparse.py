"""The local judge's item vectors as stored (apps/judges/vectors.py): a sparse 1 x width row
or a dense 1-D array, read as (indices, values) and a width."""

from __future__ import annotations

import numpy as np
from scipy import sparse


def sparse_row(vector: object) -> tuple[np.ndarray, np.ndarray]:
    """(column indices, values) of a stored vector: a sparse 1 x width row or a dense 1-D
    array."""
    if sparse.issparse(vector):
        row = sparse.csr_matrix(vector)
        if row.shape[0] != 1:
            raise ValueError(f"an item vector must be one row; got shape {row.shape}")
        row.sum_duplicates()
        return row.indices.astype(np.int64), row.data.astype(np.float64)
    dense = np.asarray(vector, dtype=np.float64).ravel()
    indices = np.flatnonzero(dense)
    return indices, dense[indices]


def sparse_width(vector: object) -> int:
    """The width (vocabulary size) of a stored vector."""
    if sparse.issparse(vector):
        return int(vector.shape[1])  # type: ignore[attr-defined]
    return int(np.asarray(vector).size)
