"""The speed work's mechanics give what the plain computations give (issue 25.5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from apps.decisions.ranking import rows, text


def _text_rows(n: int, width: int, *, density: float, seed: int) -> sparse.csr_matrix:
    """Random sparse rows, L2-normalised as the stored TF-IDF rows are."""
    x = sparse.random(n, width, density=density, random_state=seed, format="csr")
    return sparse.csr_matrix(x.multiply(1.0 / np.sqrt(x.multiply(x).sum(axis=1) + 1e-12)))


@pytest.mark.parametrize("n", [25, 300])
def test_the_fold_solves_from_one_factorisation_are_the_fold_by_fold_solves(n):
    rng = np.random.default_rng(n)
    x = _text_rows(n, 2000, density=0.01, seed=n)
    k = (x @ x.T).toarray()
    y = np.asarray(x @ rng.normal(size=2000)).ravel() + rng.normal(0, 0.5, n)
    w = rng.uniform(0.05, 0.95, n)
    folds = rng.permutation(n) % text.FOLDS
    oof, c, ybar = text._fold_solves(k, y, w, folds)
    want_oof, want_c, want_ybar = text._fold_solves_directly(k, y, w, folds)
    np.testing.assert_allclose(oof, want_oof, rtol=0, atol=1e-10)
    np.testing.assert_allclose(c, want_c, rtol=0, atol=1e-10)
    assert ybar == want_ybar
    # Not a tautology: another fold assignment gives other out-of-fold predictions.
    other, _, _ = text._fold_solves(k, y, w, np.roll(folds, 1))
    assert np.abs(other - oof).max() > 1e-6


@pytest.mark.parametrize(("width", "density"), [(13200, 0.0006), (3000, 0.03)])
def test_the_iterative_fold_solves_are_the_fold_by_fold_solves(width, density):
    # Eight and ninety terms a row: the 1M bench's synthetic texts and a real idea's.
    n = text.ITERATIVE_FROM + 100
    rng = np.random.default_rng(width)
    x = _text_rows(n, width, density=density, seed=width)
    y = np.asarray(x @ rng.normal(size=width)).ravel() + rng.normal(0, 0.5, n)
    w = rng.uniform(0.05, 0.95, n)
    folds = rng.permutation(n) % text.FOLDS
    oof, c, ybar = text._fold_solves_iterative(x, y, w, folds)
    want_oof, want_c, want_ybar = text._fold_solves_directly((x @ x.T).toarray(), y, w, folds)
    np.testing.assert_allclose(oof, want_oof, rtol=0, atol=1e-6)
    np.testing.assert_allclose(c, want_c, rtol=0, atol=1e-6)
    assert ybar == pytest.approx(want_ybar, abs=1e-12)
    other, _, _ = text._fold_solves_iterative(x, y, w, np.roll(folds, 1))
    assert np.abs(other - oof).max() > 1e-6


def test_the_text_prior_of_many_read_ideas_is_the_dense_solves(monkeypatch):
    rng = np.random.default_rng(11)
    n = 900
    x = _text_rows(n, 1500, density=0.02, seed=11)
    quality = np.asarray(x @ rng.normal(size=1500)).ravel()
    p = np.where(rng.random(n) < 0.8, rng.uniform(0.5, 3.0, n), 0.0)
    y = np.where(p > 0, quality + rng.normal(0, 0.5, n), 0.0)
    assert (p > 0).sum() >= text.ITERATIVE_FROM
    iterative, check = text.text_prior(x, y, p)
    monkeypatch.setattr(text, "ITERATIVE_FROM", n + 1)
    dense, dense_check = text.text_prior(x, y, p)
    assert check.used and dense_check.used
    np.testing.assert_allclose(iterative, dense, rtol=0, atol=1e-6)
    assert check.error_var == pytest.approx(dense_check.error_var, abs=1e-7)


def test_a_kernel_kept_across_dimensions_gives_what_each_dimension_computes_alone():
    rng = np.random.default_rng(7)
    n = 400
    x = _text_rows(n, 300, density=0.05, seed=7)
    quality = np.asarray(x @ rng.normal(size=300)).ravel()
    read = rng.random(n) < 0.6
    gated = read & (rng.random(n) < 0.7)  # a gated dimension: read on fewer ideas
    kernels: dict[bytes, np.ndarray] = {}
    kept = []
    for seen, p_read in [(read, 1.0), (read, 2.0), (gated, 1.0)]:
        y = np.where(seen, quality + rng.normal(0, 0.5, n), 0.0)
        p = np.where(seen, p_read, 0.0)
        shared = text.text_prior(x, y, p, kernels=kernels)
        alone = text.text_prior(x, y, p)
        np.testing.assert_array_equal(shared[0], alone[0])
        assert shared[1] == alone[1] and shared[1].used
        (kernel,) = kernels.values()  # one kept at a time
        kept.append(kernel)
    # The second dimension reused the first one's kernel; the gated one needed its own.
    assert kept[1] is kept[0] and kept[2] is not kept[1]


def test_the_counts_per_idea_are_pandas_counts():
    rng = np.random.default_rng(3)
    ideas = np.array([2, 5, 7, 11, 13], dtype=np.int64)
    frame = pd.DataFrame(
        {
            "idea_id": rng.choice([1, 2, 5, 7, 11, 13, 17], 200),  # 1 and 17 are not ranked
            "reviewer_id": rng.integers(1, 9, 200),
        }
    )
    pos = rows._positions(frame["idea_id"].to_numpy(np.int64), ideas)
    assert (pos[frame["idea_id"].isin([1, 17]).to_numpy()] == -1).all()
    frame["status"] = np.where(rng.random(200) < 0.3, "gated", "scored")
    nunique = frame.groupby("idea_id")["reviewer_id"].nunique().reindex(ideas, fill_value=0)
    size = frame.groupby("idea_id").size().reindex(ideas, fill_value=0)
    gated = frame[frame["status"] == "gated"]
    gated_n = gated.groupby("idea_id")["reviewer_id"].nunique().reindex(ideas, fill_value=0)
    ok = pos >= 0
    args = (
        pos[ok],
        frame["reviewer_id"].to_numpy(np.int64)[ok],
        np.ones(int(ok.sum())),
        frame["status"].to_numpy(dtype=object)[ok],
    )
    readers, gated_readers, cells = rows._read_cells(*args, overall=True, n=len(ideas))
    assert readers == nunique.tolist() and gated_readers == gated_n.tolist()
    assert np.diff(cells[0]).tolist() == nunique.tolist()  # one cell per reader overall
    _, _, cells = rows._read_cells(*args, overall=False, n=len(ideas))
    assert np.diff(cells[0]).tolist() == size.tolist()  # one cell per read on a dimension
    empty = rows._read_cells(pos[:0], pos[:0], np.zeros(0), np.zeros(0, object), overall=True, n=3)
    assert empty[0] == empty[1] == [0, 0, 0] and empty[2][0] == [0, 0, 0, 0]
