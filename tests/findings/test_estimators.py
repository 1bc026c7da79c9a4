"""The estimators against worked examples (computed by hand from the published formulas) and
against synthetic pools with a known total. No database."""

from __future__ import annotations

import math

import numpy as np
import pytest

from apps.findings.analysis import (
    chao2,
    coverage,
    discovery_curve,
    expected_new,
    expected_richness,
    reviewers_for_share,
)

# Worked example: T = 5 reviewers, 7 findings raised by 1,1,1,2,2,3,4 of them (Q1 = 3, Q2 = 2,
# U = 14). By hand from Chao 2005 / Chao et al. 2014 (incidence forms):
#   f0 = (T-1)/T * Q1^2/(2 Q2) = 0.8 * 9/4 = 1.8, Chao2 = 8.8;
#   var = Q2 [a/2 r^2 + a^2 r^3 + a^2/4 r^4], a = 0.8, r = 1.5  -> 8.2485;
#   K = exp(1.96 sqrt(ln(1 + var/f0^2))), interval [7 + f0/K, 7 + f0 K];
#   coverage = 1 - Q1/U * (T-1)Q1/((T-1)Q1 + 2Q2) = 1 - 3/14 * 12/16 = 0.839286;
#   S(1) = U/T = 2.8 (rarefaction to one reviewer is the mean findings per reviewer).
EXAMPLE = [1, 1, 1, 2, 2, 3, 4]


def test_chao2_matches_the_hand_computed_example():
    est = chao2(EXAMPLE, 5)
    assert est.estimate == pytest.approx(8.8)
    var = 2 * (0.4 * 1.5**2 + 0.64 * 1.5**3 + 0.16 * 1.5**4)
    k = math.exp(1.959963984540054 * math.sqrt(math.log(1 + var / 1.8**2)))
    assert est.bounds == pytest.approx((7 + 1.8 / k, 7 + 1.8 * k))
    # Reported in whole findings: 7.21 -> 7, 22.69 -> 23.
    assert (est.low, est.high) == (math.floor(7 + 1.8 / k), math.ceil(7 + 1.8 * k)) == (7, 23)
    assert (est.q1, est.q2, est.observed) == (3, 2, 7)


def test_chao2_uses_the_bias_corrected_form_without_doubletons():
    # Q1 = 3, Q2 = 0, T = 4: f0 = 3/4 * 3*2/2 = 2.25.
    assert chao2([1, 1, 1, 3], 4).estimate == pytest.approx(4 + 2.25)


def test_chao2_says_nothing_beyond_what_was_seen_from_one_reviewer():
    est = chao2([1, 1], 1)
    assert math.isnan(est.estimate) and math.isnan(est.low)


def test_chao2_keeps_an_interval_when_no_finding_was_raised_only_once():
    # Q1 = 0: nothing unseen is implied, but three reviewers have not ruled out another point.
    # Chao's interval for this case (as in SpadeR), by hand: each finding raised k times is
    # missed with chance e^-k; P = (2 e^-2 + e^-3) / 3;
    # var = 2 (e^-2 - e^-4) + (e^-3 - e^-6) - (2 * 2 e^-2 + 3 e^-3)^2 / 3;
    # interval [max(3, (3 - z sd)/(1-P)), (3 + z sd)/(1-P)].
    e = math.exp
    p = (2 * e(-2) + e(-3)) / 3
    var = 2 * (e(-2) - e(-4)) + (e(-3) - e(-6)) - (4 * e(-2) + 3 * e(-3)) ** 2 / 3
    high = (3 + 1.959963984540054 * math.sqrt(var)) / (1 - p)
    est = chao2([2, 2, 3], 3)
    assert est.estimate == 3
    assert est.bounds == pytest.approx((3, high))
    assert (est.low, est.high) == (3, math.ceil(high)) == (3, 5)


def test_coverage_matches_the_hand_computed_example():
    assert coverage(EXAMPLE, 5) == pytest.approx(1 - 3 / 14 * 12 / 16)


def test_rarefaction_interpolates_exactly_and_reaches_the_observed_count_at_T():
    assert expected_richness(EXAMPLE, 5, 1) == pytest.approx(14 / 5)
    assert expected_richness(EXAMPLE, 5, 5) == pytest.approx(7)
    # t = 2: sum over findings of 1 - C(5-Y, 2)/C(5, 2).
    by_hand = sum(1 - math.comb(5 - y, 2) / math.comb(5, 2) for y in EXAMPLE)
    assert expected_richness(EXAMPLE, 5, 2) == pytest.approx(by_hand)


def test_extrapolation_approaches_chao2_and_expected_new_is_its_gain():
    # S(T + k) = S_obs + f0 [1 - (1 - Q1/(T f0 + Q1))^k]  (Chao et al. 2014, eq. for incidence)
    f0 = 1.8
    step = 1 - 3 / (5 * f0 + 3)
    assert expected_new(EXAMPLE, 5, 1) == pytest.approx(f0 * (1 - step))
    assert expected_new(EXAMPLE, 5, 5) == pytest.approx(f0 * (1 - step**5))
    assert expected_richness(EXAMPLE, 5, 500) == pytest.approx(8.8, abs=1e-6)


def test_the_curve_rises_its_interval_holds_the_estimate_and_it_is_reproducible():
    curve = discovery_curve(EXAMPLE, 5, seed=3)
    values = [p.findings for p in curve]
    assert values == sorted(values)
    assert all(p.low <= p.findings <= p.high for p in curve)
    assert [p.extrapolated for p in curve] == [False] * 5 + [True] * 5
    assert curve == discovery_curve(EXAMPLE, 5, seed=3)


def test_reviewers_for_share_is_the_first_panel_reaching_the_share_of_chao2():
    k = reviewers_for_share(EXAMPLE, 5, share=0.8)
    assert k is not None
    assert expected_richness(EXAMPLE, 5, k) >= 0.8 * 8.8
    assert expected_richness(EXAMPLE, 5, k - 1) < 0.8 * 8.8


def test_bad_incidences_are_refused():
    with pytest.raises(ValueError):
        chao2([0, 1], 3)
    with pytest.raises(ValueError):
        chao2([4], 3)


def _simulate(rng, probabilities, reviewers):
    hits = rng.random((reviewers, len(probabilities))) < probabilities
    counts = hits.sum(axis=0)
    return [int(c) for c in counts if c > 0]


def test_chao2_is_near_the_known_total_of_a_homogeneous_pool():
    # 40 findings, each raised by a reviewer with probability 0.15, 10 reviewers: Chao2 is
    # nearly unbiased here (no heterogeneity); its interval holds the truth most of the time.
    rng = np.random.default_rng(7)
    estimates, inside = [], 0
    for _ in range(300):
        y = _simulate(rng, np.full(40, 0.15), 10)
        est = chao2(y, 10)
        estimates.append(est.estimate)
        inside += est.low <= 40 <= est.high
    assert abs(np.mean(estimates) - 40) < 2.5
    assert inside / 300 >= 0.85


def test_chao2_moves_toward_the_known_total_of_a_skewed_pool_as_reviewers_grow():
    # Power-law pool: 60 findings, p_r = 0.6 r^-0.8. Chao2 is a lower bound under heterogeneity,
    # above what was seen and closer to the truth with more reviewers.
    p = 0.6 * np.arange(1, 61) ** -0.8
    rng = np.random.default_rng(11)
    gaps = []
    for reviewers in (5, 20, 80):
        runs = [_simulate(rng, p, reviewers) for _ in range(100)]
        seen = np.mean([len(y) for y in runs])
        est = np.mean([chao2(y, reviewers).estimate for y in runs])
        assert seen <= est <= 60 + 3
        gaps.append(60 - est)
    assert gaps[0] > gaps[1] > gaps[2]


@pytest.mark.parametrize("units", [2, 3, 7, 12])
def test_the_replicates_curves_at_once_are_those_of_one_replicate_at_a_time(units):
    from apps.findings.analysis.estimators import _curve, _replicate_curves

    rng = np.random.default_rng(units)
    counts = rng.binomial(units, rng.uniform(0, 0.6, size=(200, 15)))
    counts[:3] = 0  # replicates that saw nothing
    counts[3, :] = 0
    counts[3, 0] = 1  # one finding, once
    ts = np.arange(1, 2 * units + 6)
    at_once = _replicate_curves(counts, units, ts)
    for b in range(len(counts)):
        one = _curve(counts[b][counts[b] > 0], units, ts)
        assert at_once[b].tobytes() == one.tobytes(), b
