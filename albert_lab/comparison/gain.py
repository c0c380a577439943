"""Two starts fine-tuned with the same recipe and seeds, compared seed by seed: what the
pretrained-versus-random question of the downstream suite, the table reports and
`albert-pretrain`'s downstream check comes down to.

The score compared is the test split's (at the checkpoint dev chose) whenever every run has
one, else dev's. A comparison in which the random start got stuck on some seed
(`albert_tf.finetuning.stuck`) cannot show a gain: a start that learned nothing is no
reference, so the verdict is `failed`, never `gain`.

    compare_starts({"1": {"value": 0.6, "test": 0.62, "stuck": False}, ...},
                   {"1": {"value": 0.5, "test": 0.49, "stuck": False}, ...})
    # Comparison(split="test", gain=..., low=..., high=..., paired_seeds=5, ...)
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, Sequence

import numpy as np

# Two-sided 95% quantiles of Student's t by degrees of freedom 1-30; more degrees of freedom
# use the last one (2.042, a little wider than the exact value).
T_95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def paired_difference(first: Sequence[float], second: Sequence[float]
                      ) -> tuple[float, float, float]:
    """Mean of `first[i] - second[i]` and its 95% t-interval (for one pair the bounds equal
    the mean: no interval can be had from one seed)."""
    if len(first) != len(second) or not len(first):
        raise ValueError(f"paired_difference needs two equally long, non-empty lists, got "
                         f"{len(first)} and {len(second)} values")
    differences = np.asarray(first, dtype=float) - np.asarray(second, dtype=float)
    mean = float(differences.mean())
    if len(differences) < 2:
        return mean, mean, mean
    quantile = T_95[min(len(differences) - 1, len(T_95)) - 1]
    half = quantile * float(differences.std(ddof=1)) / math.sqrt(len(differences))
    return mean, mean - half, mean + half


def points_interval(value: float, low: float, high: float) -> str:
    """A difference and its 95% interval, as fractions, in points: `+12.9 [-2.8, +28.6]`."""
    return f"{100 * value:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]"


def scored_split(*records: Mapping[str, Mapping[str, Any]]) -> str:
    """`test` when every seed record of every start has a test score, else `dev`."""
    runs = [run for seeds in records for run in seeds.values()]
    return "test" if runs and all(run.get("test") is not None for run in runs) else "dev"


def split_scores(records: Mapping[str, Mapping[str, Any]], split: str) -> dict[str, float]:
    """Seed -> score on `split` (`dev` is the record's `value`)."""
    key = "test" if split == "test" else "value"
    return {seed: float(run[key]) for seed, run in records.items()}


def stuck_seeds(records: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The seeds whose fine-tune is stuck at the constant answer, in seed order."""
    return sorted((seed for seed, run in records.items() if run.get("stuck")), key=int)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Pretrained minus random, paired by seed, on `split`, with a 95% t-interval."""

    split: str
    gain: float
    low: float
    high: float
    paired_seeds: int
    stuck_pretrained: tuple[str, ...] = ()
    stuck_random: tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        """`failed` (the random start stuck on a seed: no reference), `gain` (interval above
        0), `loss` (below 0) or `unclear`."""
        if self.stuck_random:
            return "failed"
        if self.paired_seeds > 1 and self.low > 0:
            return "gain"
        if self.paired_seeds > 1 and self.high < 0:
            return "loss"
        return "unclear"

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "stuck_pretrained": list(self.stuck_pretrained),
                "stuck_random": list(self.stuck_random), "verdict": self.verdict}


def compare_starts(pretrained: Mapping[str, Mapping[str, Any]],
                   random: Mapping[str, Mapping[str, Any]]) -> Comparison | None:
    """The two starts' seed records (`albert_lab.comparison.seed_loop.seed_record`) compared
    on the seeds both finished; None when they share none."""
    seeds = sorted(set(pretrained) & set(random), key=int)
    if not seeds:
        return None
    ours = {seed: pretrained[seed] for seed in seeds}
    theirs = {seed: random[seed] for seed in seeds}
    split = scored_split(ours, theirs)
    first, second = split_scores(ours, split), split_scores(theirs, split)
    gain, low, high = paired_difference([first[seed] for seed in seeds],
                                        [second[seed] for seed in seeds])
    return Comparison(split, gain, low, high, len(seeds), tuple(stuck_seeds(ours)),
                      tuple(stuck_seeds(theirs)))
