"""Item vectors for the offline judge, the pure part: how (patent, idea) texts become vectors.

One home for the representation both the stored vectors (``apps.judges.vectors``) and the local
backend's text fallback use.

- ``fit_item_vectors(items)``: the stored representation. TF-IDF (word unigrams and bigrams,
  English stop words dropped, sublinear tf) fitted on ALL items of one domain, once: one
  vectorizer for the patent texts and one for the idea texts, each capped at
  ``MAX_FEATURES_PER_PART`` terms, concatenated with the patent part weighted by
  ``PATENT_WEIGHT`` and the row L2-normalised. Why the idea dominates: examples are always
  grounded in a different patent than the target, so patent similarity mostly says "same
  technology family", while the idea text carries the product choices the scores respond to
  (measured in docs/notes/offline.md). The fit depends on the whole domain (IDF, vocabulary),
  so the vectors of a domain are fitted and stored together, keyed by ``VECTOR_MODEL`` and the
  domain's corpus fingerprint.
- ``hash_item_vectors(items)``: the fallback when a request carries no stored vector: the same
  word features hashed into ``HASH_FEATURES`` buckets, no IDF. Stateless, so a request judged
  alone and the same request judged in a batch get the same vector.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import HashingVectorizer, TfidfVectorizer
from sklearn.preprocessing import normalize

VECTOR_MODEL = "tfidf-domain-v1"
PATENT_WEIGHT = 0.25
MAX_FEATURES_PER_PART = 2048
HASH_FEATURES = 2**12


def text_sha256(patent_text: str, idea_text: str) -> str:
    """Fingerprint of an item's rendered text (prompting.patent_text + idea_text)."""
    return hashlib.sha256(f"{patent_text}\n{idea_text}".encode()).hexdigest()


def corpus_sha256(shas: Mapping[int, str]) -> str:
    """Fingerprint of a domain's items (idea id and text): changes when any item changes, is
    added or removed, which is when a domain-fitted vectorizer must be refitted."""
    digest = hashlib.sha256()
    for idea_id in sorted(shas):
        digest.update(f"{idea_id}:{shas[idea_id]};".encode())
    return digest.hexdigest()


def _normalise_rows(matrix: sparse.csr_matrix) -> np.ndarray:
    dense = np.asarray(matrix.toarray(), dtype=np.float32)
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return dense / norms


def _tfidf(texts: list[str]) -> sparse.csr_matrix:
    vectorizer = TfidfVectorizer(
        ngram_range=(1, 2),
        stop_words="english",
        sublinear_tf=True,
        max_features=MAX_FEATURES_PER_PART,
        dtype=np.float32,
    )
    try:
        return vectorizer.fit_transform(texts).tocsr()
    except ValueError:  # every text empty or only stop words: no features, zero rows
        return sparse.csr_matrix((len(texts), 1), dtype=np.float32)


def fit_item_vectors(items: Sequence[tuple[str, str]]) -> np.ndarray:
    """Rows (float32, L2-normalised; a row of an empty item is zero) for (patent, idea) texts,
    fitted on these items together: pass every item of one domain."""
    if not items:
        return np.zeros((0, 1), dtype=np.float32)
    patents = _tfidf([p or "" for p, _ in items])
    ideas = _tfidf([i or "" for _, i in items])
    return _normalise_rows(sparse.hstack([PATENT_WEIGHT * patents, ideas]).tocsr())


_HASHER = HashingVectorizer(
    n_features=HASH_FEATURES,
    ngram_range=(1, 2),
    stop_words="english",
    alternate_sign=False,
    norm=None,
    dtype=np.float32,
)


def hash_item_vectors(items: Sequence[tuple[str, str]]) -> np.ndarray:
    """Stateless fallback rows (float32, L2-normalised) for (patent, idea) texts."""
    if not items:
        return np.zeros((0, 2 * HASH_FEATURES), dtype=np.float32)
    parts = []
    for texts in ([p or "" for p, _ in items], [i or "" for _, i in items]):
        counts = _HASHER.transform(texts).tocsr()
        counts.data = (1.0 + np.log(counts.data)).astype(np.float32)  # sublinear tf, as TF-IDF
        parts.append(normalize(counts))
    patents, ideas = parts
    return _normalise_rows(sparse.hstack([PATENT_WEIGHT * patents, ideas]).tocsr())
