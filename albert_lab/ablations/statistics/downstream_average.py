"""The Avg column of a table's downstream tasks, from the variants' stored scores (see
`albert_lab.ablations.variant_downstream` for how they are stored): the mean over tasks of each
task's mean over seeds, and per seed the mean over tasks, which the claims on it pair by seed;
on the test split (at the checkpoint dev chose) when every run has one, else on dev. Also how
many of the fine-tunes are stuck at the constant answer.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

DOWNSTREAM_AVERAGE = "downstream_average"  # the metric's name in reports and claims


def as_fraction(value: float) -> float:
    """A dev score on the 0-1 scale (SQuAD's F1 and exact match come in percent)."""
    return value / 100 if abs(value) > 1 else value


def scored_key(entries: Sequence[Mapping[str, Any]]) -> str:
    """`test` when every seed of every entry has a test score (at the checkpoint dev chose),
    else `value` (dev): a table's downstream figures are on test wherever they can be."""
    runs = [run for entry in entries for run in entry.get("seeds", {}).values()]
    return "test" if runs and all(run.get("test") is not None for run in runs) else "value"


def _entries(result: Mapping[str, Any], task_names: Sequence[str]) -> list | None:
    downstream = result.get("downstream", {})
    entries = [downstream.get(name) for name in task_names]
    if not task_names or any(not entry or not entry.get("seeds") for entry in entries):
        return None
    return entries


def seed_averages(result: Mapping[str, Any], task_names: Sequence[str]) -> dict[str, float]:
    """Per fine-tuning seed that every task finished: the mean over tasks of the test scores
    (dev scores where a run has no test score; as fractions). Empty when a task has no
    scores."""
    entries = _entries(result, task_names)
    if entries is None:
        return {}
    key = scored_key(entries)
    common = set.intersection(*(set(entry["seeds"]) for entry in entries))
    return {seed: float(np.mean([as_fraction(entry["seeds"][seed][key])
                                 for entry in entries]))
            for seed in sorted(common, key=int)}


def downstream_average(result: Mapping[str, Any], task_names: Sequence[str]) -> float | None:
    """The table's Avg column: the mean over tasks of each task's mean over seeds, on test
    when every run has a test score, else on dev."""
    entries = _entries(result, task_names)
    if entries is None:
        return None
    key = scored_key(entries)
    return float(np.mean([as_fraction(np.mean([run[key] for run in entry["seeds"].values()]))
                          for entry in entries]))


def stuck_count(result: Mapping[str, Any], task_names: Sequence[str],
                seeds: Sequence[str] | None = None) -> int:
    """How many of the result's fine-tunes (task and seed, among `seeds` if given) are stuck
    at the constant answer (`albert_tf.finetuning.stuck`; runs that do not say count as not
    stuck)."""
    downstream = result.get("downstream", {})
    return sum(bool(run.get("stuck")) for name in task_names
               for seed, run in downstream.get(name, {}).get("seeds", {}).items()
               if seeds is None or seed in seeds)
