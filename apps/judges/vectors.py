"""Item vectors for the offline judge: each idea (with its patent) is embedded once and kept.

Contract used by the run execution:
    item_vectors(idea_ids) -> {idea_id: 1-D float32 numpy array, L2-normalised}
computed on first use and stored, recomputed only when the idea's or its patent's text changes.
The execution passes the mapping to the local backend: get_backend("local", vectors=mapping).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def item_vectors(idea_ids: Iterable[int]) -> dict[int, np.ndarray]:
    """Placeholder until the offline judge lands: no stored vectors (the backend embeds text)."""
    return {}
