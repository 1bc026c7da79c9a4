"""Item vectors for the offline judge: each idea (with its patent) is embedded once and kept.

Contract used by the run execution:
    item_vectors(idea_ids) -> {idea_id: 1-D float32 numpy array, L2-normalised}
computed on first use and stored, recomputed only when the idea's or its patent's text changes.
The execution passes the mapping to the local backend: get_backend("local", vectors=mapping).

How (the representation itself is in apps.judges.item_text): vectors are TF-IDF fitted on ALL
ideas of a domain, so they are keyed by (model, domain): every stored row carries the
fingerprint of its domain's texts (``corpus_sha256``). A call renders the texts of the domains
of the requested ideas (prompting.patent_text + idea_text), and
- if every requested idea has a row of the current model with the domain's current
  fingerprint, those rows are decoded and returned (no fitting);
- otherwise the domain is fitted once and the rows of ALL its ideas are written in one bulk
  upsert. So an edited, added or removed idea refits its domain (a fraction of a second for
  hundreds of ideas), and nothing else ever does.
Vectors of different domains are never compared (examples come from the target's domain).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from apps.catalog.models import Idea
from apps.judges.item_text import VECTOR_MODEL, corpus_sha256, fit_item_vectors, text_sha256
from apps.judges.models import ItemVector
from apps.judges.prompting import idea_text, patent_text


def _domain_texts(domain_id: int) -> dict[int, tuple[str, str]]:
    ideas = (
        Idea.objects.filter(patent__domain_id=domain_id)
        .select_related("patent")
        .order_by("id")
        .only(
            "id",
            "title",
            "description",
            "implementation",
            "differentiation",
            "patent__title",
            "patent__abstract",
            "patent__claims",
        )
    )
    return {
        idea.id: (
            patent_text(idea.patent.title, idea.patent.abstract, idea.patent.claims),
            idea_text(idea.title, idea.description, idea.implementation, idea.differentiation),
        )
        for idea in ideas
    }


def _decode(row_vector: bytes | memoryview, dimensions: int) -> np.ndarray:
    vector = np.frombuffer(bytes(row_vector), dtype="<f4")
    if len(vector) != dimensions:
        raise ValueError(f"stored item vector has {len(vector)} values, expected {dimensions}")
    return vector.astype(np.float32, copy=False)


def _refit_domain(texts: dict[int, tuple[str, str]], corpus: str) -> dict[int, np.ndarray]:
    ids = sorted(texts)
    matrix = fit_item_vectors([texts[i] for i in ids])
    vectors = {idea_id: matrix[n] for n, idea_id in enumerate(ids)}
    ItemVector.objects.bulk_create(
        [
            ItemVector(
                idea_id=idea_id,
                model=VECTOR_MODEL,
                text_sha256=text_sha256(*texts[idea_id]),
                corpus_sha256=corpus,
                dimensions=matrix.shape[1],
                vector=vectors[idea_id].astype("<f4").tobytes(),
            )
            for idea_id in ids
        ],
        batch_size=500,
        update_conflicts=True,
        unique_fields=["idea", "model"],
        update_fields=["text_sha256", "corpus_sha256", "dimensions", "vector", "computed_at"],
    )
    return vectors


def item_vectors(idea_ids: Iterable[int]) -> dict[int, np.ndarray]:
    """Stored vectors of these ideas, computing missing or stale ones (module docstring).
    Unknown idea ids are left out of the result."""
    wanted = {int(i) for i in idea_ids}
    if not wanted:
        return {}
    by_domain: dict[int, set[int]] = defaultdict(set)
    for idea_id, domain_id in Idea.objects.filter(id__in=wanted).values_list(
        "id", "patent__domain_id"
    ):
        by_domain[domain_id].add(idea_id)
    result: dict[int, np.ndarray] = {}
    for domain_id, ids in by_domain.items():
        texts = _domain_texts(domain_id)
        corpus = corpus_sha256({i: text_sha256(*t) for i, t in texts.items()})
        rows = {
            row.idea_id: row
            for row in ItemVector.objects.filter(
                idea_id__in=ids, model=VECTOR_MODEL, corpus_sha256=corpus
            )
        }
        if len(rows) == len(ids):
            result.update({i: _decode(r.vector, r.dimensions) for i, r in rows.items()})
        else:
            vectors = _refit_domain(texts, corpus)
            result.update({i: vectors[i] for i in ids})
    return result
