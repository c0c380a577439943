"""The Avg column of a table's downstream tasks, from the variants' stored dev scores (see
`albert_experiments.variant_downstream` for how they are stored): the mean over tasks of each
task's mean over seeds, and per seed the mean over tasks, which the claims on it pair by seed.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

DOWNSTREAM_AVERAGE = "downstream_average"  # the metric's name in reports and claims


def as_fraction(value: float) -> float:
    """A dev score on the 0-1 scale (SQuAD's F1 and exact match come in percent)."""
    return value / 100 if abs(value) > 1 else value


def seed_averages(result: Mapping[str, Any], task_names: Sequence[str]) -> dict[str, float]:
    """Per fine-tuning seed that every task finished: the mean over tasks of the dev scores
    (as fractions). Empty when a task has no scores."""
    downstream = result.get("downstream", {})
    entries = [downstream.get(name) for name in task_names]
    if not task_names or any(not entry or not entry.get("seeds") for entry in entries):
        return {}
    common = set.intersection(*(set(entry["seeds"]) for entry in entries))
    return {seed: float(np.mean([as_fraction(entry["seeds"][seed]["value"])
                                 for entry in entries]))
            for seed in sorted(common, key=int)}


def downstream_average(result: Mapping[str, Any], task_names: Sequence[str]) -> float | None:
    """The table's Avg column: the mean over tasks of each task's mean over seeds."""
    downstream = result.get("downstream", {})
    values = [downstream.get(name, {}).get("value") for name in task_names]
    if not task_names or any(value is None for value in values):
        return None
    return float(np.mean([as_fraction(value) for value in values]))
