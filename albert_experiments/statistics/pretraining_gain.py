"""What pretraining is worth on a table's downstream tasks: each variant's scores (on test at
the checkpoint dev chose; dev for runs made before test scores were kept) minus those of the
table's random start (the first variant's sizes fine-tuned with the same recipe
and seeds, without pretraining), paired by fine-tuning seed, with Student's 95% t-interval;
per task and on the table's average.

    result = {"downstream": {"bbc": {"seeds": {"1": {"value": 0.6}, "2": {"value": 0.7}}}}}
    start = {"downstream": {"bbc": {"seeds": {"1": {"value": 0.5}, "2": {"value": 0.5}}}}}
    pretraining_gains(result, start, ["bbc"])["bbc"]
    # {"gain": 0.15, "low": -0.485..., "high": 0.785..., "seeds": 2}
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from albert_experiments.statistics.downstream_average import DOWNSTREAM_AVERAGE, seed_averages
from albert_experiments.statistics.intervals import paired_difference
from albert_tf.comparison.gain import points_interval


def pretraining_gains(result: Mapping[str, Any], random_start: Mapping[str, Any],
                      task_names: Sequence[str]) -> dict[str, dict[str, float]]:
    """By task name (and `downstream_average` for the mean over the tasks): the mean over
    the seeds both finished of `result`'s score minus `random_start`'s (as fractions),
    its 95% interval (`low`, `high`; equal to the gain with one seed) and the number of
    seeds. A column neither side finished on a common seed is left out."""
    columns = [(name, [name]) for name in task_names]
    columns += [(DOWNSTREAM_AVERAGE, list(task_names))] if task_names else []
    gains = {}
    for column, names in columns:
        ours, theirs = seed_averages(result, names), seed_averages(random_start, names)
        seeds = sorted(set(ours) & set(theirs), key=int)
        if not seeds:
            continue
        gain, low, high = paired_difference([ours[seed] for seed in seeds],
                                            [theirs[seed] for seed in seeds])
        gains[column] = {"gain": gain, "low": low, "high": high, "seeds": len(seeds)}
    return gains


def _cell(found: Mapping[str, float] | None) -> str:
    if found is None:
        return "–"
    if found["seeds"] < 2:
        return f"{100 * found['gain']:+.1f} (1 seed)"
    return points_interval(found["gain"], found["low"], found["high"])


def pretraining_gains_markdown(rows: Sequence[tuple[str, Mapping[str, Mapping[str, float]]]],
                               task_names: Sequence[str], average_label: str) -> str:
    """A markdown table of `pretraining_gains` in points, one row per (label, gains);
    empty when no row has a gain."""
    if not any(gains for _, gains in rows):
        return ""
    columns = [*task_names, DOWNSTREAM_AVERAGE]
    lines = ["| trained with | " + " | ".join([*task_names, average_label]) + " |",
             "|---|" + "---|" * len(columns)]
    lines += [f"| {label} | " + " | ".join(_cell(gains.get(column)) for column in columns)
              + " |" for label, gains in rows if gains]
    return "\n".join(lines)
