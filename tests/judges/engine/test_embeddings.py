import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer

from apps.judges.backends import embed_texts
from apps.judges.engine import embeddings
from apps.judges.engine.embeddings import _bucket_for_hash, cosine_matrix, hashed_term_counts


def test_local_embeddings_are_normalised_and_comparable_across_calls():
    a = embed_texts(["fleet batteries dashboard", "contract obligations parser"], base_url="")
    b = embed_texts(["dashboard for fleet batteries"], base_url="")
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    sims = cosine_matrix(b, a)[0]
    assert sims[0] > 0.5 > sims[1]


def test_an_empty_text_gives_a_zero_row():
    vectors = embed_texts(["", "something concrete"], base_url="")
    assert not vectors[0].any()
    assert cosine_matrix(vectors, vectors)[0, 1] == 0


def test_remote_embeddings_go_through_the_openai_wire_format(fake_llm):
    vectors = embed_texts(
        ["fleet batteries", "fleet batteries now", "legal text"],
        base_url=fake_llm.base_url,
        api_key="k",
        model="embed-model",
    )
    [sent] = [r for r in fake_llm.requests if r["path"].endswith("/embeddings")]
    assert sent["model"] == "embed-model" and len(sent["input"]) == 3
    assert vectors.shape == (3, 64)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    sims = cosine_matrix(vectors, vectors)
    assert sims[0, 1] > sims[0, 2]


def _vectorizer_counts(texts, n_features):
    vectorizer = HashingVectorizer(
        n_features=n_features,
        ngram_range=(1, 2),
        stop_words="english",
        alternate_sign=False,
        norm=None,
    )
    return vectorizer.transform(texts).tocsr()


TEXTS = [
    "Local baseline (not an LLM), panel signal: 5 other reviewers scored this idea; z = -1.12.",
    "",
    "the and of",  # only stop words
    "a b c",  # only one-letter words
    "Ünïcode Straße naïve café CAFÉ déjà-vu 東京 タワー",
    "snake_case_words and __dunder__ x_y 12 3.14 1,000,000",
    "repeat repeat repeat repeat the repeat",
    "tabs\tand\nnewlines\r\nand  spaces",
    "qxjzpluralistseparatorqxjz sits inside this text",  # the separator word itself
]


@pytest.mark.parametrize("n_features", [2**13, 2**4, 3])
@pytest.mark.parametrize(
    "texts", [TEXTS, TEXTS[:1], TEXTS[1:4], [""], ["a b", "x"], TEXTS[:-1] * 50]
)
def test_hashed_counts_equal_the_vectorizers_to_the_bit(texts, n_features):
    ours = hashed_term_counts(texts, n_features=n_features)
    theirs = _vectorizer_counts(texts, n_features)
    assert ours.shape == theirs.shape
    assert np.array_equal(ours.indptr, theirs.indptr)
    assert np.array_equal(ours.indices, theirs.indices)
    assert np.array_equal(ours.data, theirs.data)


@pytest.mark.parametrize("per_pass", [1, 2, 4, 1000])
def test_counted_pass_by_pass_the_counts_and_vectors_are_the_same(monkeypatch, per_pass):
    texts = TEXTS * 3
    whole = hashed_term_counts(texts, n_features=2**13)
    vectors = embeddings.embed_texts_local_sparse(texts)
    monkeypatch.setattr(embeddings, "TEXTS_PER_PASS", per_pass)
    passes = hashed_term_counts(texts, n_features=2**13)
    for ours, theirs in [(passes, whole), (embeddings.embed_texts_local_sparse(texts), vectors)]:
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        assert np.array_equal(ours.indptr, theirs.indptr)
        assert np.array_equal(ours.indices, theirs.indices)
        assert np.array_equal(ours.data, theirs.data)


def test_no_text_gives_an_empty_matrix():
    assert hashed_term_counts([], n_features=8).shape == (0, 8)
    assert embeddings.embed_texts_local_sparse([]).shape == (0, embeddings.LOCAL_DIM)


def test_a_term_whose_hash_is_the_smallest_int32_lands_in_the_vectorizers_bucket():
    # No short term hashes to -2**31, so the rule is checked on the bucket function itself
    # against the vectorizer's formula for the same (signed) hash.
    assert _bucket_for_hash(-(2**31), 2**13) == (2**31 - 1 - (2**13 - 1)) % 2**13
    assert _bucket_for_hash(-5, 7) == 5 and _bucket_for_hash(12, 7) == 5


def test_stacked_parts_are_vstacks_and_each_is_let_go():
    from scipy import sparse

    rng = np.random.default_rng(3)
    parts = [
        sparse.random(rows, 40, density=0.2, format="csr", dtype=np.float32, random_state=rng)
        for rows in (5, 0, 1, 7)
    ]
    want = sparse.vstack(parts, format="csr")
    given = list(parts)
    got = embeddings._stacked(given, 40, np.float32)
    assert given == []
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got.indptr, want.indptr)
    assert np.array_equal(got.indices, want.indices)
    assert np.array_equal(got.data, want.data)
