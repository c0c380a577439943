"""What `source.json` says of each split: examples, groups, class counts (or the score's mean
and histogram) and the baseline that guesses from the training set alone."""

from __future__ import annotations

import collections
from typing import Sequence

from albert_lab.task_folders.examples import Example
from albert_lab.task_folders.splitting import SPLITS
from albert_lab.task_folders.task_source import TaskSource


def _majority_label(source: TaskSource, examples: Sequence[Example]) -> str:
    """The most common label (ties: the first in `source.labels`)."""
    counts = collections.Counter(example.label for example in examples)
    return max(source.labels, key=lambda label: (counts[label], -source.labels.index(label)))


def split_statistics(source: TaskSource, splits: dict[str, list[Example]],
                     assignment: dict[str, str]) -> dict:
    """Per split: examples, groups, class counts (or the score's mean and histogram), and
    the baseline that guesses from the training set alone: the majority class's accuracy,
    or the mean squared error of the training mean."""
    statistics = {}
    group_counts = collections.Counter(assignment.values())
    if source.is_regression:
        train_scores = [example.label for example in splits["train"]]
        train_mean = sum(train_scores) / max(1, len(train_scores))
    else:
        majority = _majority_label(source, splits["train"])
    for split in SPLITS:
        examples = splits[split]
        entry = {"examples": len(examples), "groups": group_counts[split]}
        if source.is_regression:
            scores = [example.label for example in examples]
            histogram = collections.Counter(min(int(score), 4) for score in scores)
            entry.update(
                mean_score=round(sum(scores) / len(scores), 4) if scores else None,
                score_histogram={f"[{low}, {low + 1}{']' if low == 4 else ')'}":
                                 histogram[low] for low in range(5)},
                train_mean_mse=(round(sum((score - train_mean) ** 2 for score in scores)
                                      / len(scores), 4) if scores else None))
        else:
            counts = collections.Counter(example.label for example in examples)
            entry.update(class_counts={label: counts[label] for label in source.labels},
                         majority_baseline=(round(counts[majority] / len(examples), 4)
                                            if examples else None))
        statistics[split] = entry
    if source.is_regression:
        baseline = {"kind": "predict the training mean (MSE; Pearson and Spearman are "
                            "undefined for a constant)", "value": round(train_mean, 4)}
    else:
        baseline = {"kind": "predict the training set's most common class (accuracy)",
                    "label": majority}
    return {"splits": statistics, "baseline": baseline}
