"""Stored item vectors (apps.judges.vectors): computed once per domain, reused, refitted when
an idea's text changes."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.linalg  # noqa: F401  (sparse.linalg.norm)
from scipy import sparse

from apps.judges.engine.item_text import VECTOR_MODEL
from apps.judges.models import ItemVector
from apps.judges.vectors import item_vector_matrix, item_vectors
from tests.judges.helpers import make_ideas

pytestmark = pytest.mark.django_db


def test_it_stores_unit_vectors_for_every_idea_of_the_domain_once(domain):
    ideas = make_ideas(domain, 6)
    vectors = item_vectors([ideas[0].id, ideas[1].id])
    assert set(vectors) == {ideas[0].id, ideas[1].id}
    width = vectors[ideas[0].id].shape[1]
    for vector in vectors.values():
        # Sparse rows of the domain's vocabulary, stored as their nonzeros only.
        assert sparse.issparse(vector) and vector.shape == (1, width)
        assert vector.dtype == np.float32 and 0 < vector.nnz < width
        assert sparse.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    row = ItemVector.objects.get(idea=ideas[0])
    assert row.dimensions == width and len(bytes(row.vector)) == 8 * vectors[ideas[0].id].nnz
    # The whole domain was fitted and stored together, under the current model name.
    assert ItemVector.objects.filter(model=VECTOR_MODEL).count() == 6
    stamps = dict(ItemVector.objects.values_list("idea_id", "computed_at"))

    again = item_vectors([i.id for i in ideas])
    assert set(again) == {i.id for i in ideas}
    assert (again[ideas[0].id] != vectors[ideas[0].id]).nnz == 0
    # Nothing was recomputed: every row kept its timestamp.
    assert dict(ItemVector.objects.values_list("idea_id", "computed_at")) == stamps


def test_it_recomputes_the_domain_when_an_idea_text_changes(domain):
    ideas = make_ideas(domain, 5)
    before = item_vectors([i.id for i in ideas])
    old_sha = ItemVector.objects.get(idea=ideas[2]).text_sha256
    ideas[2].description = "A completely different product: drones that paint bridges."
    ideas[2].save()

    after = item_vectors([ideas[2].id, ideas[0].id])
    row = ItemVector.objects.get(idea=ideas[2])
    assert row.text_sha256 != old_sha
    old_vector, new_vector = before[ideas[2].id], after[ideas[2].id]
    assert old_vector.shape != new_vector.shape or (old_vector != new_vector).nnz > 0
    # The domain was refitted together: every row carries the new corpus fingerprint.
    assert ItemVector.objects.values("corpus_sha256").distinct().count() == 1


def test_it_ignores_unknown_ideas_and_empty_requests(domain):
    ideas = make_ideas(domain, 2)
    assert item_vectors([]) == {}
    assert set(item_vectors([ideas[0].id, 999_999])) == {ideas[0].id}


def test_it_replaces_rows_of_an_older_representation_when_it_fits_the_domain(domain):
    ideas = make_ideas(domain, 3)
    ItemVector.objects.create(
        idea=ideas[0],
        model="tfidf-domain-v1",
        text_sha256="x",
        corpus_sha256="y",
        dimensions=2,
        vector=np.zeros(2, "<f4").tobytes(),
    )
    item_vectors([ideas[0].id])
    assert set(ItemVector.objects.values_list("model", flat=True)) == {VECTOR_MODEL}


def test_the_matrix_of_a_domains_vectors_is_their_rows_stacked_stored_or_refitted(domain):
    ideas = make_ideas(domain, 6)
    order = [ideas[3].id, ideas[0].id, ideas[5].id, ideas[1].id]
    # First call: nothing stored, the domain is fitted; then read back from the stored rows.
    fitted = item_vector_matrix(order)
    stored = item_vector_matrix(order)
    rows = item_vectors(order)
    stacked = sparse.vstack([rows[i] for i in order]).tocsr()
    for matrix in (fitted, stored):
        assert matrix is not None and matrix.shape == stacked.shape
        assert matrix.dtype == stacked.dtype == np.float32
        assert (matrix != stacked).nnz == 0
    assert np.array_equal(stored.indices, stacked.indices)
    assert np.array_equal(stored.data, stacked.data)
    # An id that is not an idea: no matrix (the caller leaves the domain's text model out).
    assert item_vector_matrix([ideas[0].id, 10**9]) is None
    assert item_vector_matrix([]) is None


def test_a_stored_domain_is_checked_without_reading_its_texts(domain, monkeypatch):
    # The decision recompute asks for every domain's matrix: once stored, the fingerprint comes
    # from the database's digests and no text is read or rendered.
    from apps.judges import vectors

    ideas = make_ideas(domain, 4)
    ids = [i.id for i in ideas]
    first = item_vector_matrix(ids)

    def no_texts(domain_id):
        raise AssertionError("the texts were read")

    monkeypatch.setattr(vectors, "domain_texts", no_texts)
    again = item_vector_matrix(ids)
    assert first is not None and again is not None and (first != again).nnz == 0
    assert set(item_vectors(ids)) == set(ids)


@pytest.mark.parametrize("edit", ["patent abstract", "idea added", "idea removed"])
def test_the_fingerprint_follows_every_text_the_vectors_are_fitted_on(domain, edit):
    from apps.judges.vectors import corpus_fingerprint

    ideas = make_ideas(domain, 4)
    item_vector_matrix([i.id for i in ideas])
    before, _ = corpus_fingerprint(domain.id)
    if edit == "patent abstract":
        patent = ideas[1].patent
        patent.abstract = "An entirely different invention: self-healing asphalt."
        patent.save()
    elif edit == "idea added":
        ideas += make_ideas(domain, 1)
    else:
        ideas.pop().delete()
    after, ids = corpus_fingerprint(domain.id)
    assert after != before and ids == {i.id for i in ideas}
    # The next read refits the domain: every row carries the new fingerprint.
    assert item_vector_matrix([i.id for i in ideas]) is not None
    assert set(ItemVector.objects.values_list("corpus_sha256", flat=True)) == {after}


def test_a_domain_read_again_is_not_decoded_again_until_its_texts_change(domain):
    """The decoded vectors are kept per (domain, model, texts' fingerprint): the runs of one
    refresh read them once; an edited idea is a new fingerprint, read and refitted."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    ideas = make_ideas(domain, 4)
    item_vectors([i.id for i in ideas])  # fitted and stored
    first = item_vectors([i.id for i in ideas])  # read and decoded
    with CaptureQueriesContext(connection) as queries:
        again = item_vectors([i.id for i in ideas[:3]])
    assert not [q for q in queries.captured_queries if "judges_itemvector" in q["sql"]]
    assert set(again) == {i.id for i in ideas[:3]}
    assert all((again[i] != first[i]).nnz == 0 for i in again)

    ideas[1].description = "Something else entirely: a kettle that reads the news."
    ideas[1].save()
    with CaptureQueriesContext(connection) as queries:
        edited = item_vectors([i.id for i in ideas])
    assert [q for q in queries.captured_queries if "judges_itemvector" in q["sql"]]
    old, new = first[ideas[1].id], edited[ideas[1].id]
    assert old.shape != new.shape or (old != new).nnz > 0
