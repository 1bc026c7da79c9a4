"""Krippendorff's alpha: published values and equality with the reference package."""

import krippendorff  # GPL-3.0 reference implementation: tests and benchmarks only
import numpy as np
import pandas as pd
import pytest

from apps.disagreement.analysis import alpha_from_long, krippendorff_alpha
from apps.disagreement.analysis.alpha import alpha_batch, alpha_from_coincidence

from .helpers import MEASUREMENT_LEVELS as LEVELS

nan = np.nan
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": observers A-D, units 1-12.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


@pytest.mark.parametrize(
    "level,published",
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_it_reproduces_the_published_values_of_the_2011_example(level, published):
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level), 3) == published


def _random_matrix(seed, observers=12, units=60, n_values=6, missing=0.45):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, n_values, size=(observers, units)).astype(float)
    data[rng.random(data.shape) < missing] = nan
    return data


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("level", LEVELS)
def test_it_matches_the_krippendorff_package_on_random_matrices_with_missing_values(level, seed):
    data = _random_matrix(seed, observers=3 + seed * 3, units=20 + seed * 17, n_values=3 + seed)
    ours = krippendorff_alpha(data, level)
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert ours == pytest.approx(ref, abs=1e-9)


@pytest.mark.parametrize("level", LEVELS)
def test_it_matches_the_package_on_non_integer_values(level):
    rng = np.random.default_rng(9)
    data = rng.choice([0.5, 1.25, 2.0, 3.5, 7.0], size=(7, 50))
    data[rng.random(data.shape) < 0.3] = nan
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level) == pytest.approx(ref, abs=1e-9)


def test_an_ordinal_value_domain_with_unused_values_matches_the_package():
    data = _random_matrix(11, n_values=4) + 1  # values 1..4; the scale is 0..6
    ref = krippendorff.alpha(
        reliability_data=data, value_domain=list(range(7)), level_of_measurement="ordinal"
    )
    assert krippendorff_alpha(data, "ordinal", values=range(7)) == pytest.approx(ref, abs=1e-9)


def test_a_value_outside_the_given_domain_is_refused_by_name():
    with pytest.raises(ValueError, match="7.0"):
        krippendorff_alpha([[1, 2, 7], [1, 2, 3]], "ordinal", values=[1, 2, 3])


def test_units_with_a_single_value_do_not_change_alpha():
    base = np.array(KRIPPENDORFF_2011, dtype=float)
    lone = np.full((4, 3), nan)
    lone[0, :] = [5, 1, 4]  # each extra unit coded by one observer only
    assert krippendorff_alpha(np.hstack([base, lone]), "interval") == pytest.approx(
        krippendorff_alpha(base, "interval"), abs=1e-12
    )


def test_alpha_is_undefined_when_no_disagreement_is_possible():
    assert np.isnan(krippendorff_alpha([[3, 3, 3], [3, 3, nan]], "ordinal"))


def test_alpha_is_undefined_with_fewer_than_two_pairable_values():
    assert np.isnan(krippendorff_alpha([[1, nan], [nan, 2]], "nominal"))
    assert np.isnan(krippendorff_alpha(np.full((2, 2), nan), "nominal"))


def test_an_unknown_level_is_refused():
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(KRIPPENDORFF_2011, "cardinal")


@pytest.mark.parametrize("level", LEVELS)
def test_the_long_frame_version_equals_the_matrix_version(level):
    data = _random_matrix(3)
    coders, units = np.nonzero(~np.isnan(data))
    frame = pd.DataFrame(
        {"unit": units * 10, "coder": [f"c{c}" for c in coders], "v": data[coders, units]}
    )
    frame.loc[len(frame)] = {"unit": 999, "coder": "c0", "v": nan}  # missing row is ignored
    assert alpha_from_long(frame, "unit", "coder", "v", level) == pytest.approx(
        krippendorff_alpha(data, level), abs=1e-12
    )


def test_the_long_frame_version_refuses_two_values_from_one_coder_for_one_unit():
    frame = pd.DataFrame({"unit": [1, 1, 1], "coder": ["a", "a", "b"], "v": [1, 2, 2]})
    with pytest.raises(ValueError, match="'a'"):
        alpha_from_long(frame, "unit", "coder", "v", "nominal")


@pytest.mark.parametrize("level", LEVELS)
def test_batched_alphas_equal_one_at_a_time(level):
    rng = np.random.default_rng(5)
    domain = np.array([1.0, 2.0, 3.0, 4.0])
    stack = rng.integers(0, 4, size=(10, 4, 4)).astype(float)
    stack = stack + stack.transpose(0, 2, 1)
    batch = alpha_batch(stack, domain, level)
    for o, a in zip(stack, batch, strict=True):
        assert a == pytest.approx(alpha_from_coincidence(o, domain, level), abs=1e-12)


@pytest.mark.parametrize("level", LEVELS)
def test_the_sparse_path_for_huge_matrices_gives_the_same_alpha(level, monkeypatch):
    from apps.disagreement.analysis import alpha as alpha_module

    data = _random_matrix(8, observers=9, units=70, n_values=5)
    dense = krippendorff_alpha(data, level)
    monkeypatch.setattr(alpha_module, "_DENSE_LIMIT", 10)
    assert krippendorff_alpha(data, level) == pytest.approx(dense, abs=1e-12)
