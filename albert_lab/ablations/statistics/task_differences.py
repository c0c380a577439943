"""One variant's downstream scores against another's, task by task: the scores (on test at
the checkpoint dev chose; dev for runs made before test scores were kept) of `result` minus
those of `other`, paired by fine-tuning seed, with Student's 95% t-interval; per task and on
the table's average. Reports use it twice: each variant against the table's random start
(what pretraining is worth: the first variant's sizes fine-tuned with the same recipe and
seeds, without pretraining), and the two sides of each downstream claim (where the
average's verdict comes from).

    result = {"downstream": {"bbc": {"seeds": {"1": {"value": 0.6}, "2": {"value": 0.7}}}}}
    start = {"downstream": {"bbc": {"seeds": {"1": {"value": 0.5}, "2": {"value": 0.5}}}}}
    task_differences(result, start, ["bbc"])["bbc"]
    # {"gain": 0.15, "low": -0.485..., "high": 0.785..., "seeds": 2}
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from albert_lab.ablations.statistics.downstream_average import DOWNSTREAM_AVERAGE, seed_averages
from albert_lab.ablations.statistics.intervals import paired_difference
from albert_lab.comparison.gain import points_interval


def task_differences(result: Mapping[str, Any], other: Mapping[str, Any],
                     task_names: Sequence[str]) -> dict[str, dict[str, float]]:
    """By task name (and `downstream_average` for the mean over the tasks): the mean over
    the seeds both finished of `result`'s score minus `other`'s (as fractions; `gain`), its
    95% interval (`low`, `high`; equal to the gain with one seed) and the number of seeds.
    A column neither side finished on a common seed is left out."""
    columns = [(name, [name]) for name in task_names]
    columns += [(DOWNSTREAM_AVERAGE, list(task_names))] if task_names else []
    differences = {}
    for column, names in columns:
        ours, theirs = seed_averages(result, names), seed_averages(other, names)
        seeds = sorted(set(ours) & set(theirs), key=int)
        if not seeds:
            continue
        gain, low, high = paired_difference([ours[seed] for seed in seeds],
                                            [theirs[seed] for seed in seeds])
        differences[column] = {"gain": gain, "low": low, "high": high, "seeds": len(seeds)}
    return differences


def _cell(found: Mapping[str, float] | None) -> str:
    if found is None:
        return "–"
    if found["seeds"] < 2:
        return f"{100 * found['gain']:+.1f} (1 seed)"
    return points_interval(found["gain"], found["low"], found["high"])


def task_differences_markdown(rows: Sequence[tuple[str, Mapping[str, Mapping[str, float]]]],
                              task_names: Sequence[str], average_label: str,
                              row_header: str = "trained with") -> str:
    """A markdown table of `task_differences` in points, one row per (label, differences),
    its first column headed `row_header`; empty when no row has a difference."""
    if not any(differences for _, differences in rows):
        return ""
    columns = [*task_names, DOWNSTREAM_AVERAGE]
    lines = [f"| {row_header} | " + " | ".join([*task_names, average_label]) + " |",
             "|---|" + "---|" * len(columns)]
    lines += [f"| {label} | " + " | ".join(_cell(differences.get(column))
                                           for column in columns) + " |"
              for label, differences in rows if differences]
    return "\n".join(lines)
