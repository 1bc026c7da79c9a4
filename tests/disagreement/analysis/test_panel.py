"""Panel size: Spearman-Brown and the single-rater reliability ICC(1)."""

import math

import pytest

from apps.disagreement.analysis import icc1, k_needed, reliability_curve, spearman_brown


def test_spearman_brown_for_two_raters_of_reliability_one_half():
    assert spearman_brown(0.5, 2) == pytest.approx(0.6667, abs=1e-4)
    assert spearman_brown(0.5, 1) == 0.5


def test_three_raters_are_needed_for_075_and_nine_for_090_at_reliability_one_half():
    assert k_needed(0.5, 0.75) == 3
    assert k_needed(0.5, 0.90) == 9


def test_one_rater_is_enough_when_single_reliability_already_reaches_the_target():
    assert k_needed(0.8, 0.75) == 1


def test_no_panel_size_helps_when_reliability_is_zero_negative_or_missing():
    assert k_needed(0.0, 0.75) is None
    assert k_needed(-0.2, 0.75) is None
    assert k_needed(None, 0.75) is None
    assert k_needed(math.nan, 0.75) is None
    assert reliability_curve(-0.1) == []


def test_the_curve_runs_from_one_to_twenty_and_rises():
    curve = reliability_curve(0.3)
    assert [p["k"] for p in curve] == list(range(1, 21))
    values = [p["reliability"] for p in curve]
    assert values[0] == pytest.approx(0.3)
    assert all(b > a for a, b in zip(values, values[1:], strict=False))


def test_icc1_of_a_balanced_hand_worked_case():
    # means 1.5, 3.5, 5.5; MSB = 2 * 8 / 2 = 8; MSW = 1.5 / 3 = 0.5; ICC = 7.5 / 8.5
    assert icc1([[1, 2], [3, 4], [5, 6]]) == pytest.approx(7.5 / 8.5)


def test_icc1_of_an_unbalanced_hand_worked_case():
    # groups [1,2,3], [4,5], [6,6,7,8]: N=9, g=3, grand mean 42/9
    # SSB = 3*(2-14/3)^2 + 2*(4.5-14/3)^2 + 4*(6.75-14/3)^2 = 38.7222...
    # SSW = 2 + 0.5 + 2.75 = 5.25; MSB = SSB/2; MSW = 5.25/6; n0 = (9 - 29/9)/2
    ssb = 3 * (2 - 14 / 3) ** 2 + 2 * (4.5 - 14 / 3) ** 2 + 4 * (6.75 - 14 / 3) ** 2
    msb, msw, n0 = ssb / 2, 5.25 / 6, (9 - 29 / 9) / 2
    expected = (msb - msw) / (msb + (n0 - 1) * msw)
    assert icc1([[1, 2, 3], [4, 5], [6, 6, 7, 8]]) == pytest.approx(expected)


def test_icc1_is_undefined_with_fewer_than_two_items():
    assert math.isnan(icc1([[1, 2, 3]]))
