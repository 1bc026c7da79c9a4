"""Text embeddings for comparing judges' reasons (SPEC "Reasoning structure").

With settings.EMBEDDINGS_BASE_URL set, ``apps.judges.backends.embed_texts`` sends texts to that
OpenAI-compatible /embeddings endpoint (model settings.EMBEDDINGS_MODEL). Otherwise this local
method, which downloads nothing: a HashingVectorizer (word unigrams and bigrams, English stop words
removed, sublinear tf) into LOCAL_DIM buckets. Hashing is stateless, so vectors from separate calls
are comparable (a fitted TF-IDF/SVD would change with every corpus). Rows are L2-normalised; an
empty text gives a zero row (cosine 0 with everything).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import normalize

LOCAL_DIM = 2**13


def normalise_rows(matrix: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def embed_texts_local(texts: Sequence[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, LOCAL_DIM), dtype=np.float32)
    return embed_texts_local_sparse(texts).toarray()


def embed_texts_local_sparse(texts: Sequence[str]) -> sparse.csr_matrix:
    """The local vectors as a sparse matrix (rows L2-normalised): a text has a few dozen of the
    LOCAL_DIM buckets, and 20,000 reasons would take 650 MB dense."""
    vectorizer = HashingVectorizer(
        n_features=LOCAL_DIM,
        ngram_range=(1, 2),
        stop_words="english",
        alternate_sign=False,
        norm=None,
    )
    counts = vectorizer.transform([t or "" for t in texts])
    counts.data = 1.0 + np.log(counts.data)  # sublinear tf
    return normalize(counts.astype(np.float32), norm="l2", axis=1).tocsr()


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b`` (rows need not be
    normalised; zero rows give 0)."""
    return normalise_rows(np.atleast_2d(a)) @ normalise_rows(np.atleast_2d(b)).T
