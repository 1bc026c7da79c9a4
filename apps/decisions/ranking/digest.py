"""What a domain's board is computed from, as one digest: equal digests give equal boards.

A rating change touches one domain, and each domain's board (its fits, text model, P(top) and
rows) depends on that domain's inputs alone. The recompute therefore keeps the previous
snapshot's board of every domain whose digest is unchanged and fits only the others
(docs/decide.md, "When it is computed").

The digest covers everything ``build_boards`` passes to a domain's fit and rows: the domain's
ratings and predictions as the model sees them, its catalogue rows (codes and titles), its
text vectors, the scales and the top share, and the code that computes the board (this
package's source) with the numeric libraries' versions, so a new model never reuses a board
computed by an old one. Rows are combined as a multiset (the sum of per-row hashes, with the
count): the database returns them in no set order, and the order changes nothing the board
shows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy
from scipy import sparse

from .model import Scale


@cache
def code_fingerprint() -> str:
    """This package's source and the numeric libraries' versions."""
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    h.update(f"numpy {np.__version__} scipy {scipy.__version__} pandas {pd.__version__}".encode())
    return h.hexdigest()


def _rows_hash(frame: pd.DataFrame) -> bytes:
    """The rows of ``frame`` as a multiset: their count and the sum of their hashes (the
    column names and order included)."""
    columns = sorted(frame.columns)
    rows = pd.util.hash_pandas_object(frame[columns], index=False).to_numpy(np.uint64)
    total = int(rows.sum(dtype=np.uint64))  # wraps modulo 2^64, as intended
    return f"{','.join(columns)}|{len(rows)}|{total}".encode()


def domain_digest(
    *,
    frame: pd.DataFrame,
    predictions: pd.DataFrame,
    catalog: pd.DataFrame,
    vectors: tuple[np.ndarray, Any] | None,
    scales: Mapping[str, Scale],
    top_share: float,
) -> str:
    """One domain's inputs to its board, as a hex digest."""
    h = hashlib.blake2b(digest_size=16)
    h.update(code_fingerprint().encode())
    h.update(repr(sorted(scales.items())).encode())
    h.update(repr(float(top_share)).encode())
    for part in (frame, predictions, catalog):
        h.update(_rows_hash(part))
    if vectors is None:
        h.update(b"no vectors")
    else:
        ids, matrix = vectors
        h.update(np.ascontiguousarray(ids, dtype=np.int64).tobytes())
        if sparse.issparse(matrix):
            csr = sparse.csr_matrix(matrix)
            parts = [csr.indptr, csr.indices, csr.data]
        else:
            parts = [np.asarray(matrix, dtype=float)]
        h.update(repr(parts[-1].dtype).encode() + repr(getattr(matrix, "shape", None)).encode())
        for part in parts:
            h.update(np.ascontiguousarray(part).tobytes())
    return h.hexdigest()
