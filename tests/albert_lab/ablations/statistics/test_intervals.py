"""The intervals under every verdict (`albert_lab.ablations.statistics.intervals`), by hand."""

from __future__ import annotations

import numpy as np
import pytest
from experiment_results import agreeing_outcomes

from albert_lab.ablations.statistics.intervals import paired_difference, proportions_difference


def test_paired_difference_is_students_t_interval_by_hand():
    # Differences 0.1 and 0.3: mean 0.2, sd 0.1414, t(1) = 12.706 -> 0.2 +- 1.2706.
    assert paired_difference([0.6, 0.8], [0.5, 0.5]) == pytest.approx((0.2, -1.0706, 1.4706))
    # Differences 1, 2, 3, 4: mean 2.5, sd 1.2910, t(3) = 3.182 -> 2.5 +- 2.0540.
    assert paired_difference([1, 2, 3, 4], [0, 0, 0, 0]) == pytest.approx(
        (2.5, 0.4460, 4.5540), abs=1e-4)
    assert paired_difference([0.7], [0.5]) == pytest.approx((0.2, 0.2, 0.2))
    with pytest.raises(ValueError, match="equally long"):
        paired_difference([0.1, 0.2], [0.1])


def test_proportions_difference_is_the_normal_interval_by_hand():
    # se = sqrt(.2 * .8 / 1e4 + .18 * .82 / 1e4) = 0.0055462; 1.96 se = 0.0108703.
    assert proportions_difference(0.20, 10_000, 0.18, 10_000) == pytest.approx(
        (0.02, 0.0091297, 0.0308703), abs=1e-6)
    # Against a fixed 50%: only the first side varies.
    assert proportions_difference(0.58, 400, 0.5, 0) == pytest.approx(
        (0.08, 0.031632, 0.128368), abs=1e-6)


def test_binomial_p_values_by_hand():
    from albert_lab.ablations.statistics.intervals import binomial_p_value
    # 9 of 10 at 50%: the counts 0, 1, 9, 10 are as unlikely: (1 + 10 + 10 + 1) / 1024.
    assert binomial_p_value(9, 10) == pytest.approx(22 / 1024)
    assert binomial_p_value(10, 10) == pytest.approx(2 / 1024)
    assert binomial_p_value(5, 10) == pytest.approx(1.0)
    # 2 of 3 at 25%: P = 1/64 27/64 27/64 9/64 for 3, 0, 1, 2 hits -> 1 + 9 of 64.
    assert binomial_p_value(2, 3, 0.25) == pytest.approx(10 / 64)
    with pytest.raises(ValueError, match="successes <= trials"):
        binomial_p_value(11, 10)


def test_paired_outcomes_difference_is_the_interval_of_per_example_differences():
    from albert_lab.ablations.statistics.intervals import paired_outcomes_difference
    # Differences 0, 1, 0, 0: mean 0.25, sd 0.5, 1.96 * 0.5 / 2 = 0.49.
    assert paired_outcomes_difference([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(
        (0.25, -0.24, 0.74), abs=1e-4)
    first, second = agreeing_outcomes()
    difference, low, high = paired_outcomes_difference(first["mlm_correct"],
                                                       second["mlm_correct"])
    # 200 differences of 1 in 10,000: sd sqrt(0.02 * 0.98 * 10000 / 9999) = 0.1400070.
    assert difference == pytest.approx(0.02)
    assert high - difference == pytest.approx(1.959964 * 0.1400070 / 100, abs=1e-6)
    with pytest.raises(ValueError, match="equally long"):
        paired_outcomes_difference([True, False], [True])


def test_paired_outcomes_difference_is_exact_and_the_same_in_any_order():
    """numpy's mean and sample deviation of the float differences to the last digits or so,
    and bit for bit the same figures however the examples are ordered (the counts it rests
    on do not round), so a report re-made on another machine does not differ."""
    from albert_lab.ablations.statistics.intervals import Z_95, paired_outcomes_difference
    rng = np.random.default_rng(7)
    first, second = rng.random((2, 50_001)) < [[0.31], [0.27]]
    differences = first.astype(float) - second.astype(float)
    half = Z_95 * differences.std(ddof=1) / np.sqrt(len(differences))
    found = paired_outcomes_difference(first, second)
    assert found == pytest.approx((differences.mean(), differences.mean() - half,
                                   differences.mean() + half), rel=1e-12)
    for seed in range(3):
        order = np.random.default_rng(seed).permutation(len(first))
        assert paired_outcomes_difference(first[order], second[order]) == found
