"""A classification or regression task in the user's own files (`table_files`: CSV, TSV,
JSON Lines): which columns hold the text, the optional second text and the label; the label
set the training file has; and the checks, each naming file, line and column. No TensorFlow.

    columns = OwnColumns(text="review", text_pair=None, label="stars")
    train = read_split("train.csv", columns, is_regression=False)
    labels = label_set(train)                        # sorted; numbers in numeric order
    dev = read_split("dev.jsonl", columns, False, labels)  # a label not in `labels`: error
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Sequence

from albert_tf.task_data.examples import TaskDataError, TextExample
from albert_tf.task_data.table_files import read_table, table_columns, table_format


@dataclasses.dataclass(frozen=True)
class OwnColumns:
    """The columns (or JSON keys) of the task's files: the text, the second text of a pair
    task (None for single texts) and the label."""

    text: str
    text_pair: str | None
    label: str

    @property
    def texts(self) -> tuple[str, ...]:
        return (self.text,) if self.text_pair is None else (self.text, self.text_pair)


def has_labels(path: str, columns: OwnColumns) -> bool:
    """Whether the file has the label column: in its header (CSV, TSV) or in its first row
    (JSON Lines). A test file without it is predicted, not scored."""
    names = table_columns(path)
    if names is not None:
        return columns.label in names
    first = next(read_table(path), None)
    return first is not None and columns.label in first.values


def read_split(path: str, columns: OwnColumns, is_regression: bool,
               labels: Sequence[str] | None = None, labelled: bool = True
               ) -> list[TextExample]:
    """The examples of one file, in order (guid `<line>`).

    Args:
        path: a `.csv`, `.tsv` or `.jsonl` file.
        columns: where the texts and the label are.
        is_regression: the label is a number (else a class name).
        labels: the training file's label set; a class label outside it is an error (dev and
            test files).
        labelled: read the label column (False: a test file without one).

    Raises:
        TaskDataError: naming the file, line and column: a missing column, an empty text, a
            label that is empty, not a number (regression) or not in `labels`; and what
            `table_files` refuses (not UTF-8, a broken row).
    """
    needed = columns.texts + ((columns.label,) if labelled else ())
    names = table_columns(path)
    if names is not None:
        missing = [name for name in needed if name not in names]
        if missing:
            raise TaskDataError(f"{path}:1: no column {_names(missing)}; the header has "
                                f"{_names(names)}")
    examples = []
    for row in read_table(path):
        where = f"{path}:{row.line}"
        texts = [_text(row.values, name, where) for name in columns.texts]
        label = None
        if labelled:
            value = _value(row.values, columns.label, where)
            label = (_number(value, columns.label, where) if is_regression
                     else _class(value, columns.label, where, labels))
        examples.append(TextExample(str(row.line), texts[0],
                                    texts[1] if len(texts) > 1 else None, label))
    if not examples:
        raise TaskDataError(f"{path}: no rows; expected one example per row")
    return examples


def label_set(examples: Sequence[TextExample]) -> tuple[str, ...]:
    """The distinct labels, sorted: as numbers when every label is an integer ("2" before
    "10"), else as strings."""
    distinct = {example.label for example in examples}
    if all(_is_integer(label) for label in distinct):
        return tuple(sorted(distinct, key=int))
    return tuple(sorted(distinct))


def check_formats(*paths: str) -> None:
    """Each path is a file of a known table format (before anything else reads them)."""
    for path in paths:
        table_format(path)


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(name) for name in names)


def _value(values: dict[str, Any], column: str, where: str) -> Any:
    if column not in values:
        raise TaskDataError(f"{where}: no column {column!r} in this row; it has "
                            f"{_names(list(values))}")
    return values[column]


def _text(values: dict[str, Any], column: str, where: str) -> str:
    text = _value(values, column, where)
    if not isinstance(text, str):
        raise TaskDataError(f"{where}: column {column!r} holds {json.dumps(text)}; expected "
                            f"text")
    if not text.strip():
        raise TaskDataError(f"{where}: column {column!r} is empty; every row needs its text")
    return text


def _number(value: Any, column: str, where: str) -> float:
    number = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            pass
    if not math.isfinite(number):
        raise TaskDataError(f"{where}: column {column!r} holds {_shown(value)}; a regression "
                            f"label must be a finite number")
    return number


def _class(value: Any, column: str, where: str, labels: Sequence[str] | None) -> str:
    if isinstance(value, (dict, list)) or value is None:
        raise TaskDataError(f"{where}: column {column!r} holds {_shown(value)}; expected a "
                            f"class label")
    label = value if isinstance(value, str) else json.dumps(value)
    if not label.strip():
        raise TaskDataError(f"{where}: column {column!r} is empty; every row needs its label")
    if labels is not None and label not in labels:
        raise TaskDataError(f"{where}: label {label!r} (column {column!r}) is not one of the "
                            f"{len(labels)} labels of the training file ({_names(labels)})")
    return label


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else json.dumps(value)


def _is_integer(label: str) -> bool:
    try:
        int(label)
    except ValueError:
        return False
    return True
