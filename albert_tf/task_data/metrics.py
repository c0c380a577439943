"""Scores of the GLUE fine-tuning tasks, computed from labels and predictions on the host.

Each GLUE task is reported with the metric its leaderboard uses:

| task | metric |
|---|---|
| CoLA | Matthews correlation (`matthews_correlation`) |
| SST-2, MNLI (matched and mismatched), QNLI, RTE, WNLI | `accuracy` |
| MRPC, QQP | `f1_score` of the positive class and `accuracy` |
| STS-B | `pearson` and `spearman` correlation of the predicted and gold similarity |

All values are plain Python floats, fractions rather than percent: accuracy and F1 lie in
[0, 1], the correlations in [-1, 1]. Degenerate inputs (a constant side of a correlation,
a single gold or predicted class for MCC) score 0.0 instead of NaN, so that comparing
checkpoints by their score never meets a NaN.

Inputs are 1-D sequences or numpy arrays of equal, non-zero length. Class labels may be any
values numpy compares by equality (ints, strings); correlations need numbers. Nothing here
imports TensorFlow.
"""

from __future__ import annotations

from typing import Any, Sequence, Union

import numpy as np

ArrayLike = Union[Sequence[Any], np.ndarray]


def _as_pair(first: ArrayLike, second: ArrayLike, first_name: str, second_name: str,
             dtype: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs as 1-D arrays of one length, or a ValueError saying which rule they break."""
    first_array = np.asarray(first, dtype=dtype)
    second_array = np.asarray(second, dtype=dtype)
    for name, array in ((first_name, first_array), (second_name, second_array)):
        if array.ndim != 1:
            raise ValueError(f"{name} has shape {array.shape}; expected a 1-D sequence of "
                             f"values, one per example")
    if len(first_array) != len(second_array):
        raise ValueError(f"{first_name} has {len(first_array)} values but {second_name} has "
                         f"{len(second_array)}; expected one of each per example")
    if len(first_array) == 0:
        raise ValueError(f"{first_name} and {second_name} are empty; a score needs at least "
                         f"one example")
    return first_array, second_array


def accuracy(labels: ArrayLike, predictions: ArrayLike) -> float:
    """Fraction of examples whose prediction equals the label.

    Args:
        labels: gold classes, shape `(num_examples,)`.
        predictions: predicted classes, shape `(num_examples,)`.

    Returns:
        A float in [0, 1].

    Example:
        >>> accuracy([0, 1, 1, 0], [0, 1, 0, 0])
        0.75
    """
    labels, predictions = _as_pair(labels, predictions, "labels", "predictions")
    return float(np.mean(labels == predictions))


def f1_score(labels: ArrayLike, predictions: ArrayLike, positive: Any = 1) -> float:
    """Binary F1 of the `positive` class: the harmonic mean of its precision and recall.

    Args:
        labels: gold classes, shape `(num_examples,)`.
        predictions: predicted classes, shape `(num_examples,)`.
        positive: the class whose F1 is reported (MRPC's "paraphrase", QQP's "duplicate").

    Returns:
        `2 * tp / (2 * tp + fp + fn)`, a float in [0, 1]; 0.0 when there is no true
        positive (precision or recall is then 0, or undefined).

    Example:
        >>> f1_score([1, 1, 0, 0], [1, 0, 1, 0])
        0.5
    """
    labels, predictions = _as_pair(labels, predictions, "labels", "predictions")
    gold_positive = labels == positive
    predicted_positive = predictions == positive
    true_positives = int(np.sum(gold_positive & predicted_positive))
    if true_positives == 0:
        return 0.0
    false_positives = int(np.sum(~gold_positive & predicted_positive))
    false_negatives = int(np.sum(gold_positive & ~predicted_positive))
    return 2.0 * true_positives / (2 * true_positives + false_positives + false_negatives)


def matthews_correlation(labels: ArrayLike, predictions: ArrayLike) -> float:
    """Matthews correlation coefficient in Gorodkin's multi-class form.

    With the confusion matrix over the classes seen in either input, `s` examples, `c` of
    them correct, `t_k` examples of gold class k and `p_k` predicted as k:

        MCC = (c * s - sum_k p_k * t_k) / sqrt((s^2 - sum_k p_k^2) * (s^2 - sum_k t_k^2))

    For two classes this equals the usual `(tp * tn - fp * fn) / sqrt(...)`.

    Args:
        labels: gold classes, shape `(num_examples,)`.
        predictions: predicted classes, shape `(num_examples,)`.

    Returns:
        A float in [-1, 1]; 0.0 when the denominator is 0 (all gold labels or all
        predictions one class), as scikit-learn reports it.

    Example:
        >>> round(matthews_correlation([1, 1, 0, 0], [1, 1, 1, 0]), 4)
        0.5774
    """
    labels, predictions = _as_pair(labels, predictions, "labels", "predictions")
    classes, class_index = np.unique(np.concatenate([labels, predictions]), return_inverse=True)
    num_examples = len(labels)
    gold_index, predicted_index = class_index[:num_examples], class_index[num_examples:]
    # float64 throughout: s^2 * s^2 overflows int64 beyond ~55k examples.
    gold_counts = np.bincount(gold_index, minlength=len(classes)).astype(np.float64)
    predicted_counts = np.bincount(predicted_index, minlength=len(classes)).astype(np.float64)
    correct = float(np.sum(gold_index == predicted_index))
    total = float(num_examples)
    numerator = correct * total - float(np.dot(predicted_counts, gold_counts))
    denominator = ((total ** 2 - float(np.dot(predicted_counts, predicted_counts)))
                   * (total ** 2 - float(np.dot(gold_counts, gold_counts))))
    if denominator == 0.0:
        return 0.0
    return float(numerator / np.sqrt(denominator))


def _correlation_of_numbers(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation of two validated float arrays; 0.0 if either is constant."""
    # A regression head often predicts one value for every example early in fine-tuning.
    # The correlation is then undefined (0/0); scoring it 0.0 instead of NaN keeps
    # best-checkpoint selection, which compares scores with `>`, working.
    if np.ptp(x) == 0.0 or np.ptp(y) == 0.0:
        return 0.0
    x_centered = x - np.mean(x)
    y_centered = y - np.mean(y)
    covariance = float(np.dot(x_centered, y_centered))
    scale = float(np.sqrt(np.dot(x_centered, x_centered) * np.dot(y_centered, y_centered)))
    # Rounding can push a perfect correlation a hair past 1.
    return float(np.clip(covariance / scale, -1.0, 1.0))


def pearson(x: ArrayLike, y: ArrayLike) -> float:
    """Pearson (linear) correlation coefficient of two number sequences.

    Args:
        x: numbers, shape `(num_examples,)`, e.g. predicted STS-B similarities.
        y: numbers, shape `(num_examples,)`, e.g. gold similarities.

    Returns:
        A float in [-1, 1]; 0.0 when either side is constant, where the coefficient is
        undefined (a regression model that predicts one value for everything early in
        fine-tuning must not produce a NaN that breaks best-checkpoint selection).

    Example:
        >>> pearson([1, 2, 3], [2, 4, 6])
        1.0
    """
    x, y = _as_pair(x, y, "x", "y", dtype=np.float64)
    return _correlation_of_numbers(x, y)


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of `values` in ascending order; tied values share their average rank.

    Args:
        values: numbers, shape `(num_values,)`.

    Returns:
        float64 ranks, shape `(num_values,)`.

    Example:
        >>> average_ranks(np.array([10.0, 30.0, 20.0, 30.0])).tolist()
        [1.0, 3.5, 2.0, 3.5]
    """
    _, group_of_value, group_sizes = np.unique(values, return_inverse=True, return_counts=True)
    last_rank = np.cumsum(group_sizes).astype(np.float64)
    first_rank = last_rank - group_sizes + 1.0
    return ((first_rank + last_rank) / 2.0)[group_of_value.reshape(-1)]


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman rank correlation: the Pearson correlation of the average ranks of x and y.

    Args:
        x: numbers, shape `(num_examples,)`.
        y: numbers, shape `(num_examples,)`.

    Returns:
        A float in [-1, 1]; 0.0 when either side is constant (see `pearson` for why).

    Example:
        >>> spearman([1, 2, 3, 4], [1, 4, 9, 16])
        1.0
    """
    x, y = _as_pair(x, y, "x", "y", dtype=np.float64)
    return _correlation_of_numbers(average_ranks(x), average_ranks(y))
