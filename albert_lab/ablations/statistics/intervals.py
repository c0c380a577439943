"""95% intervals the reports put on differences: for two held-out accuracies a normal interval,
paired over the examples when both models' outcomes on the same examples are known, of
independent samples otherwise; Student's t-interval for a difference paired by fine-tuning
seed.

    paired_difference([0.6, 0.8], [0.5, 0.5])  # (0.2, -1.07, 1.47): two seeds say little
    proportions_difference(0.20, 10_000, 0.18, 10_000)  # (0.02, 0.0091, 0.0309)
    paired_outcomes_difference([1, 1, 0, 0], [1, 0, 0, 0])  # (0.25, -0.24, 0.74)
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from albert_lab.comparison.gain import paired_difference  # noqa: F401 (one home)

Z_95 = 1.959964


def proportions_difference(first: float, first_count: int, second: float,
                           second_count: int) -> tuple[float, float, float]:
    """`first - second` of two accuracies measured on `first_count` and `second_count`
    samples, with the 95% normal interval of independent samples; a count of 0 makes that
    side exact (a fixed reference such as chance)."""
    variance = sum(p * (1 - p) / n for p, n in ((first, first_count), (second, second_count))
                   if n)
    difference = first - second
    half = Z_95 * math.sqrt(variance)
    return difference, difference - half, difference + half


def paired_outcomes_difference(first: Sequence[bool], second: Sequence[bool]
                               ) -> tuple[float, float, float]:
    """Accuracy of `first` minus that of `second`, two models' right/wrong outcomes on the
    same examples in the same order, with the 95% normal interval of the mean per-example
    difference. Examples both get right (or both wrong) add no variance, so when two models
    agree on most examples this interval is much narrower than `proportions_difference`'s.

    The mean and the sample variance come from two integer counts, each divided once, so the
    figures are the same on every machine and in every order of the examples (a sum of
    floats rounds by the order its SIMD lanes add in), and a report re-made elsewhere
    matches the committed one to the last digit."""
    if len(first) != len(second) or len(first) < 2:
        raise ValueError(f"paired_outcomes_difference needs two equally long lists of at "
                         f"least two outcomes, got {len(first)} and {len(second)}")
    differences = (np.asarray(first, dtype=bool).astype(np.int64)
                   - np.asarray(second, dtype=bool).astype(np.int64))  # each -1, 0 or 1
    count = len(differences)
    total = int(differences.sum())  # right only in first, less right only in second
    disagreements = int(np.abs(differences).sum())  # the sum of squared differences
    mean = total / count
    variance = (count * disagreements - total * total) / (count * (count - 1))
    half = Z_95 * math.sqrt(variance) / math.sqrt(count)
    return mean, mean - half, mean + half


def binomial_p_value(successes: int, trials: int, chance: float = 0.5) -> float:
    """Exact two-sided p-value of `successes` in `trials` against the rate `chance`: the
    probability of every count no more likely than the one observed."""
    if not 0 <= successes <= trials or trials < 1 or not 0 < chance < 1:
        raise ValueError(f"binomial_p_value needs 0 <= successes <= trials, trials >= 1 and "
                         f"0 < chance < 1, got {successes}, {trials}, {chance}")

    def log_probability(count: int) -> float:
        return (math.lgamma(trials + 1) - math.lgamma(count + 1)
                - math.lgamma(trials - count + 1) + count * math.log(chance)
                + (trials - count) * math.log1p(-chance))

    observed = log_probability(successes)
    tolerance = 1e-7  # counts as likely as the observed one, up to rounding, are included
    total = sum(math.exp(value) for value in map(log_probability, range(trials + 1))
                if value <= observed + tolerance)
    return min(1.0, total)
