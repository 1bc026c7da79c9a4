"""Confidence calibration: a fitted confidence c means about c % exactly right."""

import numpy as np
import pytest

from apps.judges.engine.calibration import (
    Calibration,
    coverage_accuracy_curve,
    cross_fit_confidence,
    fit_calibration,
)


def synthetic(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Raw confidences that overclaim: a raw r is right with chance (r / 100) ** 2."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 101, n).astype(float)
    correct = rng.random(n) < (raw / 100) ** 2
    return raw, correct


def test_it_maps_raw_confidence_to_the_observed_share_exactly_right():
    raw, correct = synthetic(20_000)
    calibration = fit_calibration(raw, correct)
    calibrated = calibration.apply(raw)
    assert calibrated.dtype.kind == "i" and calibrated.min() >= 0 and calibrated.max() <= 100
    for c in (20, 50, 80):
        kept = calibrated >= c
        share_right = correct[kept].mean()
        # Among predictions with confidence >= c, at least about c % are right (and not far
        # more than the lowest kept confidence promises).
        assert share_right >= c / 100 - 0.03
    assert calibration.apply([90])[0] == pytest.approx(81, abs=4)  # 0.9 ** 2
    assert list(calibration.apply([10, 50, 90])) == sorted(calibration.apply([10, 50, 90]))


def test_it_round_trips_through_a_dict_and_refuses_bad_ones():
    raw, correct = synthetic(2_000, seed=1)
    calibration = fit_calibration(raw, correct)
    again = Calibration.from_dict(calibration.to_dict())
    assert again == calibration
    np.testing.assert_array_equal(again.apply(raw), calibration.apply(raw))
    assert Calibration.from_dict({"kind": "identity"}).apply([37.4]).tolist() == [37]
    with pytest.raises(ValueError, match="kind"):
        Calibration.from_dict({"kind": "magic"})
    with pytest.raises(ValueError, match="length"):
        Calibration.from_dict({"kind": "isotonic", "x": [0, 50], "y": [10]})


def test_with_little_data_it_falls_back_to_the_observed_accuracy():
    calibration = fit_calibration([90, 90, 20], [True, False, False])
    assert calibration.kind == "constant"
    assert calibration.apply([0, 100]).tolist() == [33, 33]
    assert fit_calibration([], []).apply([42]).tolist() == [42]


def test_cross_fitting_never_calibrates_a_group_on_itself():
    raw, correct = synthetic(6_000, seed=2)
    groups = np.arange(len(raw)) % 3
    # Group 0's predictions are all wrong: a fit that saw them would pull its confidences down,
    # but cross-fitting calibrates group 0 only on groups 1 and 2.
    correct = np.where(groups == 0, False, correct)
    cross = cross_fit_confidence(raw, correct, groups)
    own = fit_calibration(raw, correct).apply(raw)
    others = fit_calibration(raw[groups != 0], correct[groups != 0]).apply(raw[groups == 0])
    np.testing.assert_array_equal(cross[groups == 0], others)
    assert cross[groups == 0].mean() > own[groups == 0].mean()
    with pytest.raises(ValueError, match="length"):
        cross_fit_confidence([1, 2], [True], [0, 0])


def test_the_coverage_accuracy_curve_counts_targets_above_each_threshold():
    confidence = [10, 40, 40, 80, float("nan")]
    correct = [False, True, False, True, True]
    curve = {row["threshold"]: row for row in coverage_accuracy_curve(confidence, correct)}
    assert len(curve) == 101
    assert curve[0] == {"threshold": 0, "kept": 4, "coverage": 0.8, "accuracy": 0.5}
    assert curve[40]["kept"] == 3 and curve[40]["accuracy"] == pytest.approx(2 / 3)
    assert curve[41]["kept"] == 1 and curve[41]["accuracy"] == 1.0
    assert curve[81] == {"threshold": 81, "kept": 0, "coverage": 0.0, "accuracy": None}


@pytest.mark.parametrize("seed", range(6))
def test_its_breakpoints_are_the_estimators(seed):
    """The fit computes IsotonicRegression's breakpoints without the estimator: the same arrays,
    on whole-number confidences with many ties, on a handful of distinct values, and on
    fractional ones (two of them closer than float resolution, which the estimator merges)."""
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 3000))
    raw = {
        0: rng.integers(0, 101, n).astype(float),
        1: rng.choice([20.0, 55.0, 86.0], n),
        2: rng.random(n) * 100,
        3: np.concatenate([rng.integers(0, 101, n - 2), [50.0, 50.0 + 1e-16]]),
    }[seed % 4]
    correct = rng.random(n) < (raw / 100) ** (1 + seed % 3)
    model = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    model.fit(raw, correct.astype(float))
    fit = fit_calibration(raw, correct)
    assert fit.x == tuple(round(float(v), 4) for v in model.X_thresholds_)
    assert fit.y == tuple(round(float(v) * 100, 4) for v in model.y_thresholds_)
