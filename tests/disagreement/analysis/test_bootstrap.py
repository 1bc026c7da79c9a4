"""Vectorised bootstrap of alpha."""

import numpy as np
import pytest

from apps.disagreement.analysis import bootstrap, bootstrap_alpha, krippendorff_alpha
from apps.disagreement.analysis.alpha import alpha_from_counts
from apps.disagreement.analysis.bootstrap import UnitContributions, resample_weights

from .helpers import MEASUREMENT_LEVELS as LEVELS


def _data(seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=80)
    data = np.clip(truth + rng.integers(-1, 2, size=(6, 80)), 1, 5).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    return data


@pytest.mark.parametrize("level", LEVELS)
def test_the_interval_contains_the_point_estimate(level):
    data = _data()
    lo, hi = bootstrap_alpha(data, level, n_boot=500, seed=1)
    assert lo < krippendorff_alpha(data, level) < hi
    assert hi - lo < 0.5


def test_the_interval_is_reproducible_with_the_same_seed_and_moves_with_another():
    data = _data()
    assert bootstrap_alpha(data, n_boot=300, seed=7) == bootstrap_alpha(data, n_boot=300, seed=7)
    assert bootstrap_alpha(data, n_boot=300, seed=7) != bootstrap_alpha(data, n_boot=300, seed=8)


@pytest.mark.parametrize("level", LEVELS)
def test_unit_weights_of_one_reproduce_alpha_and_doubling_a_unit_matches_a_recount(level):
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 3, size=(30, 5)).astype(float)
    domain = np.arange(1.0, 6.0)
    contrib = UnitContributions(counts, domain, level)
    weights = np.ones((2, 30))
    weights[1, 4] = 2.0  # unit 4 drawn twice
    weights[1, 7] = 0.0  # unit 7 not drawn
    got = contrib.alphas(weights)
    recount = np.vstack([counts, counts[4:5]])
    recount = np.delete(recount, 7, axis=0)
    assert got[0] == pytest.approx(alpha_from_counts(counts, domain, level), abs=1e-12)
    assert got[1] == pytest.approx(alpha_from_counts(recount, domain, level), abs=1e-12)


def test_each_resample_counts_how_often_its_draws_named_each_unit():
    n_units, n_boot = 7, 40
    weights = resample_weights(n_units, n_boot, np.random.default_rng(5))
    draws = np.random.default_rng(5).integers(0, n_units, size=(n_boot, n_units))
    assert weights.shape == (n_boot, n_units) and weights.dtype == np.float64
    for row, drawn in zip(weights, draws, strict=True):
        assert row.tolist() == [float(np.sum(drawn == unit)) for unit in range(n_units)]


def test_large_blocks_are_counted_as_small_ones_are():
    # Above _COUNT_AT_ONCE draws the counts are made row by row: the same counts.
    n_units, n_boot = 2000, 200
    weights = resample_weights(n_units, n_boot, np.random.default_rng(2))
    draws = np.random.default_rng(2).integers(0, n_units, size=(n_boot, n_units))
    assert draws.size > bootstrap._COUNT_AT_ONCE
    want = np.stack([np.bincount(row, minlength=n_units) for row in draws]).astype(float)
    assert np.array_equal(weights, want)


def test_smaller_blocks_for_many_units_draw_the_same_resamples(monkeypatch):
    from apps.disagreement.analysis.bootstrap import bootstrap_samples

    rng = np.random.default_rng(7)
    counts = rng.integers(0, 3, size=(3000, 4)).astype(float)
    contrib = UnitContributions(counts, np.arange(4.0), "ordinal")
    (whole,) = bootstrap_samples([contrib], len(counts), 300, 11)
    # Blocks of 7 resamples at 3,000 units: the same draws, products equal but for the last bits.
    monkeypatch.setattr(bootstrap, "_WEIGHT_CELLS", 7 * 3000)
    (blocked,) = bootstrap_samples([contrib], len(counts), 300, 11)
    assert np.allclose(blocked, whole, rtol=0, atol=1e-12)
    assert not np.allclose(whole[1:], whole[:-1])  # resamples that differ from each other


def test_drawing_kinds_of_unit_resamples_as_drawing_the_units():
    from apps.disagreement.analysis.bootstrap import bootstrap_samples, bootstrap_samples_of_kinds

    # 1,200 two-coder units on a five-point scale: 25 kinds of unit at most.
    rng = np.random.default_rng(4)
    truth = rng.integers(1, 6, size=1200)
    pred = np.clip(truth + rng.integers(-1, 2, size=1200), 1, 5)
    counts = np.zeros((1200, 5))
    counts[np.arange(1200), truth - 1] += 1
    counts[np.arange(1200), pred - 1] += 1
    domain = np.arange(1.0, 6.0)
    kinds, n_of_kind = np.unique(counts, axis=0, return_counts=True)
    by_unit = UnitContributions(counts, domain, "ordinal")
    by_kind = UnitContributions(kinds, domain, "ordinal")
    # The point estimate: every kind weighted by its units is every unit once, exactly.
    assert (
        by_kind.alphas(n_of_kind[None, :].astype(float))[0] == by_unit.alphas(np.ones((1, 1200)))[0]
    )
    (units,) = bootstrap_samples([by_unit], 1200, 4000, 1)
    (drawn,) = bootstrap_samples_of_kinds([by_kind], n_of_kind, 4000, 1)
    # The same distribution (not the same numbers): its centre, spread and 95 % interval.
    assert drawn.mean() == pytest.approx(units.mean(), abs=0.003)
    assert drawn.std() == pytest.approx(units.std(), rel=0.05)
    for q in (2.5, 97.5):
        assert np.percentile(drawn, q) == pytest.approx(np.percentile(units, q), abs=0.006)
    assert not np.allclose(drawn, units)
    again = bootstrap_samples_of_kinds([by_kind], n_of_kind, 4000, 1)[0]
    assert np.array_equal(again, drawn)  # reproducible with the seed
