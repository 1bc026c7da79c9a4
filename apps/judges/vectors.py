"""Item vectors for the offline judge: each idea (with its patent) is embedded once and kept.

Contract used by the run execution:
    item_vectors(idea_ids) -> {idea_id: sparse row}
a sparse row is a 1 x width ``scipy.sparse.csr_matrix`` (float32, L2-normalised; width = the
size of its domain's vocabulary, so rows of different domains differ in width and are never
compared). Computed on first use and stored, recomputed only when the idea's or its patent's
text changes. The execution only passes the mapping on, unread, to the local backend:
get_backend("local", vectors=mapping) (which also accepts dense 1-D arrays as values).

How (the representation itself is in apps.judges.engine.item_text): vectors are TF-IDF fitted on ALL
ideas of a domain, so they are keyed by (model, domain): every stored row carries the
fingerprint of its domain's texts (``corpus_sha256``, ``corpus_fingerprint``: each idea's text
fields with its patent's, digested by the database, so checking it reads no text), and
- if every requested idea has a row of the current model with the domain's current
  fingerprint, those rows are decoded and returned (no fitting);
- otherwise the domain is fitted once and the rows of ALL its ideas are written in one bulk
  upsert (rows of older representations of those ideas are deleted). So an edited, added or
  removed idea refits its domain (a fraction of a second for hundreds of ideas), and nothing
  else ever does. The texts are read and rendered (prompting.patent_text + idea_text) only to
  fit. The fingerprint covers the fields the rendering reads, not the rendering: a release that
  renders them differently bumps VECTOR_MODEL.
Vectors of different domains are never compared (examples come from the target's domain).

Which parts of each item are fitted (idea + source, idea only, source only) is the domain's
measured choice (``ItemTextChoice``, written by apps.judges.services.item_parts; none = the
full text). The parts are part of the stored model name (``item_text.vector_model``), so a new
choice refits the domain on its next use, once.

Storage (``ItemVector.vector``): the row's nonzero entries, int32 column indices then float32
values, both little-endian; ``dimensions`` is the row's width. A demo idea has a few hundred
nonzeros (a few KB), whatever the size of the vocabulary.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from django.db.models import F, TextField, Value
from django.db.models.functions import MD5, Concat
from scipy import sparse

from apps.catalog.models import Idea
from apps.judges.engine.item_text import DEFAULT_PARTS, fit_item_vectors, text_sha256, vector_model
from apps.judges.engine.prompting import idea_text, patent_text
from apps.judges.models import ItemTextChoice, ItemVector


def domain_parts(domain_id: int) -> str:
    """The item text parts the domain's vectors use (its measured choice, else the full text)."""
    chosen = (
        ItemTextChoice.objects.filter(domain_id=domain_id).values_list("parts", flat=True).first()
    )
    return chosen or DEFAULT_PARTS


def item_text_choices() -> list[ItemTextChoice]:
    """Every domain's stored choice with its measurement, for the judges page."""
    return list(ItemTextChoice.objects.select_related("domain").order_by("domain__name"))


# The text fields an item's rendering reads (prompting.idea_text, patent_text), in order.
TEXT_FIELDS = (
    "title",
    "description",
    "implementation",
    "differentiation",
    "patent__title",
    "patent__abstract",
    "patent__claims",
)
# Between the fields in an idea's digest: a control character no imported text holds.
FIELD_SEPARATOR = "\x1f"


def domain_texts(domain_id: int) -> dict[int, tuple[str, str]]:
    """(source text, idea text) of every idea of the domain, rendered as the judges see them.

    Read as plain values (no model instances): a judge run reads its domain's, thousands of
    ideas, and so does fitting a domain's vectors."""
    rows = (
        Idea.objects.filter(patent__domain_id=domain_id)
        .order_by("id")
        .values_list("id", *TEXT_FIELDS)
    )
    return {
        idea_id: (
            patent_text(p_title, p_abstract, p_claims),
            idea_text(title, description, implementation, differentiation),
        )
        for idea_id, title, description, implementation, differentiation, p_title, p_abstract, p_claims in rows  # noqa: E501
    }


def corpus_fingerprint(domain_id: int) -> tuple[str, set[int]]:
    """(the fingerprint of the domain's items, its idea ids). The database digests each idea's
    text fields (MD5; a change detector, not a signature), so only 32 characters an idea are
    read, where rendering and hashing every text in Python read the whole catalogue on each
    decision recompute. It changes when any idea or its patent is edited, added or removed."""
    fields = [part for name in TEXT_FIELDS for part in (Value(FIELD_SEPARATOR), F(name))][1:]
    digests = (
        Idea.objects.filter(patent__domain_id=domain_id)
        .order_by("id")
        .values_list("id", MD5(Concat(*fields, output_field=TextField())))
    )
    fingerprint = hashlib.sha256()
    ids = set()
    for idea_id, digest in digests:
        fingerprint.update(f"{idea_id}:{digest};".encode())
        ids.add(idea_id)
    return fingerprint.hexdigest(), ids


def _encode(row: sparse.csr_matrix) -> bytes:
    return row.indices.astype("<i4").tobytes() + row.data.astype("<f4").tobytes()


def _decode(stored: bytes | memoryview, width: int) -> sparse.csr_matrix:
    return _decode_rows([bytes(stored)], width)


def _decode_rows(raws: Sequence[bytes], width: int) -> sparse.csr_matrix:
    """Stored vectors (each its nnz int32 indices, then its nnz float32 values) as the rows of
    one matrix: one buffer of all of them, split by a mask, not two frombuffer calls per
    vector (55,000 ideas at 1M ratings)."""
    for raw in raws:
        if len(raw) % 8:
            raise ValueError(f"stored item vector has {len(raw)} bytes, not a multiple of 8")
    nnz = np.array([len(raw) // 8 for raw in raws], dtype=np.int64)
    indptr = np.zeros(len(raws) + 1, dtype=np.int64)
    np.cumsum(nnz, out=indptr[1:])
    words = np.frombuffer(b"".join(raws), dtype="<i4")
    offset = np.arange(len(words)) - np.repeat(2 * indptr[:-1], 2 * nnz)
    is_index = offset < np.repeat(nnz, 2 * nnz)
    indices = words[is_index].astype(np.int32)
    values = words[~is_index].view("<f4").astype(np.float32)
    if len(indices) and (indices.min() < 0 or indices.max() >= width):
        raise ValueError(f"stored item vector has an index outside its width {width}")
    return sparse.csr_matrix((values, indices, indptr.astype(np.int32)), shape=(len(raws), width))


def _refit_domain(
    texts: dict[int, tuple[str, str]], corpus: str, parts: str
) -> dict[int, sparse.csr_matrix]:
    ids = sorted(texts)
    model = vector_model(parts)
    matrix = fit_item_vectors([texts[i] for i in ids], parts)
    vectors = {idea_id: matrix[n] for n, idea_id in enumerate(ids)}
    ItemVector.objects.filter(idea_id__in=ids).exclude(model=model).delete()
    ItemVector.objects.bulk_create(
        [
            ItemVector(
                idea_id=idea_id,
                model=model,
                text_sha256=text_sha256(*texts[idea_id]),
                corpus_sha256=corpus,
                dimensions=matrix.shape[1],
                vector=_encode(vectors[idea_id]),
            )
            for idea_id in ids
        ],
        batch_size=500,
        update_conflicts=True,
        unique_fields=["idea", "model"],
        update_fields=["text_sha256", "corpus_sha256", "dimensions", "vector", "computed_at"],
    )
    return vectors


# The decoded vectors of the domains read lately in this process, by (domain, model, corpus
# fingerprint). Rows are stored for a fingerprint only by a fit of those very texts, so one key
# always reads the same rows; a domain's refresh runs two judge runs a reviewer, and decoding
# the vectors again in each was a sixteenth of a prediction run (issue 28). Bounded by rows.
_DECODED: OrderedDict[tuple[int, str, str], dict[int, sparse.csr_matrix]] = OrderedDict()
DECODED_MAX_ROWS = 20_000


def _remember(key: tuple[int, str, str], decoded: dict[int, sparse.csr_matrix]) -> None:
    if len(decoded) > DECODED_MAX_ROWS:
        return
    _DECODED[key] = decoded
    while sum(len(v) for v in _DECODED.values()) > DECODED_MAX_ROWS:
        _DECODED.popitem(last=False)


def item_vectors(
    idea_ids: Iterable[int], *, known_texts: Mapping[int, dict[int, tuple[str, str]]] | None = None
) -> dict[int, sparse.csr_matrix]:
    """Stored vectors of these ideas, computing missing or stale ones (module docstring).
    Unknown idea ids are left out of the result. ``known_texts``: ``domain_texts`` of some
    domains, read already by the caller (a judge run reads its domain's once)."""
    wanted = {int(i) for i in idea_ids}
    if not wanted:
        return {}
    by_domain: dict[int, set[int]] = defaultdict(set)
    for idea_id, domain_id in Idea.objects.filter(id__in=wanted).values_list(
        "id", "patent__domain_id"
    ):
        by_domain[domain_id].add(idea_id)
    result: dict[int, sparse.csr_matrix] = {}
    for domain_id, ids in by_domain.items():
        parts = domain_parts(domain_id)
        corpus, _ = corpus_fingerprint(domain_id)
        key = (domain_id, vector_model(parts), corpus)
        decoded = _DECODED.get(key)
        if decoded is None or not ids <= decoded.keys():
            decoded = {
                idea_id: _decode(vector, width)
                for idea_id, vector, width in ItemVector.objects.filter(
                    idea__patent__domain_id=domain_id, model=key[1], corpus_sha256=corpus
                ).values_list("idea_id", "vector", "dimensions")
            }
            if ids <= decoded.keys():
                _remember(key, decoded)
        else:
            _DECODED.move_to_end(key)
        if ids <= decoded.keys():
            result.update({i: decoded[i] for i in ids})
        else:
            texts = (known_texts or {}).get(domain_id)
            if texts is None:
                texts = domain_texts(domain_id)
            vectors = _refit_domain(texts, corpus, parts)
            result.update({i: vectors[i] for i in ids})
    return result


def item_vector_matrix(idea_ids: Sequence[int]) -> sparse.csr_matrix | None:
    """The vectors of these ideas of ONE domain as the rows of one matrix, in the given order:
    the rows ``item_vectors`` gives, stacked, without a sparse matrix per idea (the decision
    recompute reads every idea of every domain). None if an id is not an idea of one domain."""
    ids = [int(i) for i in idea_ids]
    if not ids:
        return None
    # The domain of the first id, then whether every id is one of its ideas (the fingerprint's
    # query lists them): an IN list of every id (thousands per domain) took most of this call's
    # CPU.
    domain_id = Idea.objects.filter(id=ids[0]).values_list("patent__domain_id", flat=True).first()
    if domain_id is None:
        return None
    corpus, domain_ids = corpus_fingerprint(domain_id)
    if not domain_ids.issuperset(ids):
        return None
    parts = domain_parts(domain_id)
    stored = dict(
        (idea_id, (bytes(vector), width))
        for idea_id, vector, width in ItemVector.objects.filter(
            idea__patent__domain_id=domain_id, model=vector_model(parts), corpus_sha256=corpus
        ).values_list("idea_id", "vector", "dimensions")
    )
    if not all(i in stored for i in ids):
        vectors = _refit_domain(domain_texts(domain_id), corpus, parts)
        return sparse.vstack([vectors[i] for i in ids]).tocsr()
    widths = {stored[i][1] for i in ids}
    if len(widths) != 1:
        return sparse.vstack([_decode(*stored[i]) for i in ids]).tocsr()
    (width,) = widths
    return _decode_rows([stored[i][0] for i in ids], width)
