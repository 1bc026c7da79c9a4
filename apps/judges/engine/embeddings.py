"""Text embeddings for comparing judges' reasons (SPEC "Reasoning structure").

With settings.EMBEDDINGS_BASE_URL set, ``apps.judges.backends.embed_texts`` sends texts to that
OpenAI-compatible /embeddings endpoint (model settings.EMBEDDINGS_MODEL). Otherwise this local
method, which downloads nothing: a HashingVectorizer (word unigrams and bigrams, English stop words
removed, sublinear tf) into LOCAL_DIM buckets. Hashing is stateless, so vectors from separate calls
are comparable (a fitted TF-IDF/SVD would change with every corpus). Rows are L2-normalised; an
empty text gives a zero row (cosine 0 with everything).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from sklearn.preprocessing import normalize
from sklearn.utils import murmurhash3_32

LOCAL_DIM = 2**13

# HashingVectorizer's defaults: lowercased, words of two or more word characters.
_WORD = re.compile(r"\w\w+")
_INT32_MIN = -(2**31)
# Joins the texts for one regex pass: a word no text holds (checked; else text by text).
_SEPARATOR = "qxjzpluralistseparatorqxjz"


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
    LOCAL_DIM buckets, and 20,000 reasons would take 650 MB dense. Weighted and normalised
    pass by pass: the counts of a million reasons in float64 were 200 MB more at the peak."""
    parts = []
    for counts in hashed_term_passes(texts, n_features=LOCAL_DIM):
        counts.data = 1.0 + np.log(counts.data)  # sublinear tf
        parts.append(normalize(counts.astype(np.float32), norm="l2", axis=1).tocsr())
    return _stacked(parts, LOCAL_DIM, np.float32)


def _bucket(term: str, n_features: int) -> int:
    return _bucket_for_hash(murmurhash3_32(term, seed=0), n_features)  # str: its UTF-8 bytes


def _bucket_for_hash(h: int, n_features: int) -> int:
    """The vectorizer's column for a signed 32-bit hash (abs() of the smallest one overflows
    in its C code, hence the special case)."""
    return (2**31 - 1 - (n_features - 1)) % n_features if h == _INT32_MIN else abs(h) % n_features


def _words(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every word of the texts in order (an object array) and the text each comes from.

    One regex pass over the texts joined by a separator word spares the per-text overhead of
    the matching (a fifth of it on judges' reasons); if a text holds the separator, each text is
    matched on its own instead."""
    lowered = [t.lower() for t in texts]
    joined = f" {_SEPARATOR} ".join(lowered)
    if joined.count(_SEPARATOR) == len(lowered) - 1:
        words = np.array(_WORD.findall(joined), dtype=object)
        between = words == _SEPARATOR
        return words[~between], np.cumsum(between)[~between]
    per_text = [_WORD.findall(t) for t in lowered]
    words = np.array([w for ws in per_text for w in ws], dtype=object)
    return words, np.repeat(np.arange(len(per_text)), [len(ws) for ws in per_text])


def hashed_term_counts(texts: Sequence[str | None], *, n_features: int) -> sparse.csr_matrix:
    """The counts HashingVectorizer(n_features, ngram_range=(1, 2), stop_words="english",
    alternate_sign=False, norm=None) gives, equal to the bit, in less than half its time.

    Why: the vectorizer splits and hashes text by text, term by term (a judge's reason has
    about 45 terms, and an alignment snapshot embeds hundreds of thousands of reasons: py-spy
    put it at a quarter of the snapshot). Reasons share most of their words, so here each
    distinct word and word pair is hashed once per pass and the rest is array work.
    tests/judges/engine/test_embeddings.py holds it equal to the vectorizer.
    """
    return _stacked(list(hashed_term_passes(texts, n_features=n_features)), n_features, np.float64)


def hashed_term_passes(
    texts: Sequence[str | None], *, n_features: int
) -> Iterator[sparse.csr_matrix]:
    """hashed_term_counts, TEXTS_PER_PASS texts at a time (in order): every word of a million
    reasons at once, a Python string each, took 1.6 GB more than the vectorizer."""
    for start in range(0, len(texts), TEXTS_PER_PASS):
        batch = [t or "" for t in texts[start : start + TEXTS_PER_PASS]]
        yield _pass_counts(batch, n_features)


def _stacked(parts: list[sparse.csr_matrix], n_features: int, dtype: type) -> sparse.csr_matrix:
    """The parts' rows in one matrix, as sparse.vstack stacks them. Each part is dropped from
    `parts` once copied: vstack held every part and the whole matrix at once, the alignment
    job's peak at 1M ratings (540,000 reasons of one kind, bench/bench_scale.py)."""
    if not parts:
        return sparse.csr_matrix((0, n_features), dtype=dtype)
    if len(parts) == 1:
        return parts.pop()
    n_rows, nnz = sum(p.shape[0] for p in parts), sum(p.nnz for p in parts)
    index = np.int32 if max(nnz, n_features) < np.iinfo(np.int32).max else np.int64
    data = np.empty(nnz, dtype=parts[0].dtype)
    indices = np.empty(nnz, dtype=index)
    indptr = np.zeros(n_rows + 1, dtype=index)
    row = at = 0
    parts.reverse()
    while parts:
        part = parts.pop()
        data[at : at + part.nnz] = part.data
        indices[at : at + part.nnz] = part.indices
        indptr[row + 1 : row + 1 + part.shape[0]] = part.indptr[1:] + at
        row, at = row + part.shape[0], at + part.nnz
        del part
    return sparse.csr_matrix((data, indices, indptr), shape=(n_rows, n_features))


# Texts split and counted together: large enough that the per-pass overhead is small, small
# enough that their words (a Python string each, about 60 bytes) stay a few tens of MB.
TEXTS_PER_PASS = 10_000


def _pass_counts(texts: list[str], n_features: int) -> sparse.csr_matrix:
    words, text_of = _words(texts)
    codes, vocabulary = pd.factorize(words)
    size = len(vocabulary)
    kept = np.array([w not in ENGLISH_STOP_WORDS for w in vocabulary], dtype=bool)[codes]
    codes, text_of = codes[kept], text_of[kept]
    # A pair is two kept words next to each other in one text (the vectorizer drops the stop
    # words first, then pairs what is left).
    same_text = text_of[1:] == text_of[:-1]
    pairs = codes[:-1][same_text].astype(np.int64) * size + codes[1:][same_text]
    pair_codes, distinct_pairs = pd.factorize(pairs)
    word_buckets = np.array([_bucket(w, n_features) for w in vocabulary], dtype=np.int64)
    pair_buckets = np.array(
        [
            _bucket(f"{vocabulary[p // size]} {vocabulary[p % size]}", n_features)
            for p in distinct_pairs
        ],
        dtype=np.int64,
    )
    rows = np.concatenate([text_of, text_of[:-1][same_text]])
    columns = np.concatenate([word_buckets[codes], pair_buckets[pair_codes]])
    counts = sparse.coo_matrix(
        (np.ones(len(rows)), (rows, columns)), shape=(len(texts), n_features)
    ).tocsr()
    counts.sum_duplicates()  # and sorts each row's indices, as the vectorizer's
    return counts


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b`` (rows need not be
    normalised; zero rows give 0)."""
    return normalise_rows(np.atleast_2d(a)) @ normalise_rows(np.atleast_2d(b)).T
