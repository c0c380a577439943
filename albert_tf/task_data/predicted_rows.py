"""Rows of a table file written back with the model's prediction beside each (what
`albert-predict` writes, and `albert-finetune` for a task in the user's own files). No
TensorFlow.

    classification  `prediction` (the label) and `probability_<label>` per label
    regression      `prediction` (the number)
    span            `prediction` (the answer's text) and `probability` (among the n-best)
    multiple choice `prediction` (the option's index) and `probability_<index>` per option
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from albert_tf.task_data.examples import TaskDataError
from albert_tf.task_data.table_files import TableRow, TableWriter, table_columns

PREDICTION = "prediction"
KINDS = ("classification", "regression", "span", "multiple_choice")


def prediction_columns(kind: str, labels: Sequence[str] | None = None,
                       num_choices: int = 0) -> list[str]:
    """The columns a prediction of `kind` adds (see the module docstring)."""
    if kind == "classification":
        return [PREDICTION] + [f"probability_{label}" for label in labels]
    if kind == "multiple_choice":
        return [PREDICTION] + [f"probability_{index}" for index in range(num_choices)]
    if kind == "span":
        return [PREDICTION, "probability"]
    if kind == "regression":
        return [PREDICTION]
    raise ValueError(f"unknown prediction kind {kind!r} (known: {', '.join(KINDS)})")


def prediction_values(kind: str, outputs: Mapping[str, np.ndarray],
                      labels: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One dict of prediction columns per row of `outputs`: the task outputs of a batch
    (`probabilities` for classification and multiple choice, `predictions` for regression,
    `answer` and `probability` for spans)."""
    if kind == "regression":
        return [{PREDICTION: _number(value)} for value in outputs["predictions"]]
    if kind == "span":
        return [{PREDICTION: str(answer), "probability": _number(probability)}
                for answer, probability in zip(outputs["answer"], outputs["probability"])]
    names = labels if kind == "classification" else None
    rows = []
    for probabilities in np.asarray(outputs["probabilities"]):
        best = int(np.argmax(probabilities))
        keys = names or [str(index) for index in range(len(probabilities))]
        rows.append({PREDICTION: names[best] if names else best,
                     **{f"probability_{key}": _number(value)
                        for key, value in zip(keys, probabilities)}})
    return rows


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def output_columns(input_path: str, added: Sequence[str]) -> list[str]:
    """The input's columns (its header; none for JSON Lines) and then `added`; an input that
    already has one of `added` is an error naming it."""
    columns = table_columns(input_path) or []
    clash = [name for name in added if name in columns]
    if clash:
        raise TaskDataError(f"{input_path}:1: the input already has a column "
                            f"{clash[0]!r}, which the predictions add; rename it")
    return [*columns, *added]


def write_predicted_rows(output_path: str, columns: Sequence[str],
                         rows: Iterable[tuple[TableRow, Mapping[str, Any]]]) -> int:
    """Writes each input row with its prediction columns; returns how many rows."""
    count = 0
    with TableWriter(output_path, columns) as writer:
        for row, predicted in rows:
            clash = [name for name in predicted if name in row.values]
            if clash:
                raise TaskDataError(f"line {row.line}: the input row already has "
                                    f"{clash[0]!r}, which the predictions add; rename it")
            writer.write({**row.values, **predicted})
            count += 1
    return count


def _number(value) -> float:
    """A float32 output as the shortest decimal that reads back to the same float32."""
    return float(np.format_float_positional(np.float32(value), unique=True, trim="-"))
