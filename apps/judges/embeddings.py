"""Text embeddings for comparing judges' reasons (SPEC "Reasoning structure").

With settings.EMBEDDINGS_BASE_URL set, texts go to that OpenAI-compatible /embeddings endpoint
(through backends/openai.py, model settings.EMBEDDINGS_MODEL). Otherwise a local method that
downloads nothing: a HashingVectorizer (word unigrams and bigrams, English stop words removed,
sublinear tf) into LOCAL_DIM buckets. Hashing is stateless, so vectors from separate calls are
comparable (a fitted TF-IDF/SVD would change with every corpus). Rows are L2-normalised; an
empty text gives a zero row (cosine 0 with everything).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer

from apps.judges.backends.base import _django_setting

LOCAL_DIM = 2**13


def _normalise(matrix: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def embed_texts_local(texts: Sequence[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, LOCAL_DIM), dtype=np.float32)
    vectorizer = HashingVectorizer(
        n_features=LOCAL_DIM,
        ngram_range=(1, 2),
        stop_words="english",
        alternate_sign=False,
        norm=None,
    )
    counts = vectorizer.transform([t or "" for t in texts])
    counts.data = 1.0 + np.log(counts.data)  # sublinear tf
    return _normalise(counts.toarray())


def embed_texts(texts: list[str], **options: Any) -> np.ndarray:
    """Embed texts, rows L2-normalised. ``options`` (base_url, api_key, model, timeout)
    override the EMBEDDINGS_* settings; no base URL means the local method."""
    base_url = options.get("base_url", _django_setting("EMBEDDINGS_BASE_URL", ""))
    if not base_url or not texts:
        return embed_texts_local(texts)
    from apps.judges.backends.openai import embed_texts_remote

    vectors = embed_texts_remote(
        list(texts),
        base_url=str(base_url),
        api_key=str(options.get("api_key", _django_setting("EMBEDDINGS_API_KEY", ""))),
        model=str(options.get("model", _django_setting("EMBEDDINGS_MODEL", ""))),
        timeout=float(options.get("timeout", _django_setting("LLM_TIMEOUT_SECONDS", 60.0))),
    )
    return _normalise(vectors)


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b`` (rows need not be
    normalised; zero rows give 0)."""
    return _normalise(np.atleast_2d(a)) @ _normalise(np.atleast_2d(b)).T
