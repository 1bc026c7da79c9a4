import numpy as np

from apps.judges.backends import embed_texts
from apps.judges.engine.embeddings import cosine_matrix


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
