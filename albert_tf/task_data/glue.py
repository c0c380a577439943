"""The GLUE benchmark's files: a reader (`read_glue`) and the leaderboard prediction writer
(`write_glue_predictions`), driven by each task's TSV layout (`glue_table.GLUE_TASKS`).
No TensorFlow.

Example:

    examples = read_glue("rte", "glue_data/RTE", "dev")
    examples[0].text_a, examples[0].text_b, examples[0].label
"""

from __future__ import annotations

import csv
import dataclasses
import logging
import math
import operator
import os
from typing import Iterator, Optional, Sequence, Union

from albert_tf.io.files import atomic_write_bytes
from albert_tf.io.lines import decoded_lines
from albert_tf.task_data.examples import TaskDataError, TextExample
from albert_tf.task_data.glue_table import (
    GLUE_TASKS,
    LAST_COLUMN,
    ColumnLayout,
    GlueTask,
    TaskLike,
    get_glue_task,
)
from albert_tf.task_data.table_files import MAX_LINE_BYTES

# GLUE texts contain unbalanced quotes (so quoting is off) and some are long.
_LARGEST_FIELD = 2**31 - 1

__all__ = ["GLUE_TASKS", "LAST_COLUMN", "ColumnLayout", "GlueTask", "available_splits",
           "find_split_file", "get_glue_task", "split_file", "read_glue", "read_labelled_test",
           "test_labels_path", "write_glue_predictions"]

def find_split_file(task: GlueTask, data_dir: str, split: str) -> Optional[str]:
    """The first existing file of `split`, looked for in `data_dir` itself and then in its
    subfolder named like the task (so the GLUE download's root works too)."""
    for name in task.split_files[split]:
        for folder in (data_dir, os.path.join(data_dir, task.folder)):
            path = os.path.normpath(os.path.join(folder, name))
            if os.path.isfile(path):
                return path
    return None


def split_file(task: GlueTask, data_dir: str, split: str) -> str:
    """`find_split_file`, or a TaskDataError naming the files looked for and where."""
    path = find_split_file(task, data_dir, split)
    if path is None:
        expected = " or ".join(task.split_files[split])
        raise TaskDataError(f"GLUE {task.folder} split {split!r} needs {expected} in "
                            f"{data_dir} (or in {os.path.join(data_dir, task.folder)}); "
                            f"not found")
    return path


def available_splits(task: TaskLike, data_dir: str) -> list[str]:
    """The splits of `task` whose file exists in `data_dir` (see `read_glue`).

    Args:
        task: a task name or `GlueTask`.
        data_dir: the task's folder (e.g. `glue_data/RTE`) or the GLUE download's root.
    """
    glue_task = get_glue_task(task)
    return [split for split in glue_task.splits
            if find_split_file(glue_task, data_dir, split) is not None]


def _numbered_rows(path: str) -> Iterator[tuple[int, list[str]]]:
    """(1-based line number, columns) of each non-blank line of a tab-separated file.

    Lines are read (at most `MAX_LINE_BYTES` each) and decoded one by one, so that a bad byte
    or an overlong line is reported with its line.
    """
    csv.field_size_limit(max(csv.field_size_limit(), _LARGEST_FIELD))
    with open(path, "rb") as binary:
        lines = (text for _, text in decoded_lines(binary, path, MAX_LINE_BYTES, TaskDataError))
        reader = csv.reader(lines, delimiter="\t", quotechar=None)
        try:
            for row in reader:
                if any(field.strip() for field in row):
                    yield reader.line_num, row
        except csv.Error as error:
            raise TaskDataError(f"{path}:{reader.line_num}: {error}") from None


def _row_problem(layout: ColumnLayout, row: Sequence[str]) -> Optional[str]:
    """Why `row` cannot hold the layout's fields, or None if it can."""
    if layout.num_columns is not None and len(row) != layout.num_columns:
        expected = f"{layout.num_columns}"
    elif len(row) < layout.min_columns():
        expected = f"at least {layout.min_columns()}"
    else:
        return None
    return (f"expected {expected} tab-separated columns ({layout.describe()}), "
            f"found {len(row)}")


def _parse_label(task: GlueTask, layout: ColumnLayout, row: Sequence[str],
                 where: str) -> Union[str, float]:
    """The label of a labelled row: one of the task's labels, or STS-B's score."""
    value = row[layout.label]
    column = "the last column" if layout.label == LAST_COLUMN else f"column {layout.label + 1}"
    if task.is_regression:
        try:
            score = float(value)
        except ValueError:
            score = math.nan
        if not 0.0 <= score <= 5.0:  # also rejects NaN
            raise TaskDataError(f"{where}: score {value!r} ({column}) is not a number "
                                f"in [0, 5]")
        return score
    if value not in task.labels:
        allowed = ", ".join(repr(label) for label in task.labels)
        raise TaskDataError(f"{where}: label {value!r} ({column}) is not one of the "
                            f"{task.folder} labels {allowed}")
    return value


def read_glue(task: TaskLike, data_dir: str, split: str) -> list[TextExample]:
    """The examples of one GLUE split, in file order.

    Args:
        task: a task name (`cola`, `sst2`, `mrpc`, `stsb`, `qqp`, `mnli`, `qnli`, `rte`,
            `wnli`; GLUE folder names such as `SST-2` work too) or a `GlueTask`.
        data_dir: the task's folder (e.g. `glue_data/MNLI`); the GLUE download's root also
            works, the task's subfolder is then used.
        split: one of the task's splits (`train`, `dev`, `test`; MNLI adds
            `dev_mismatched`, `test_mismatched` and the diagnostic set `ax`).

    Returns:
        One `TextExample` per non-blank row. Labelled splits give guid `<split>-<line>`
        (the row's 1-based line in the file) and the label string (a float for STS-B);
        test splits give the file's index column as guid and label None. Texts are kept
        exactly as in the file.

    Raises:
        TaskDataError: unknown task or split, missing file, a row with too few columns, a
            label outside the task's labels or an STS-B score that is not a number in
            [0, 5]; the message names the file and its line. QQP's labelled splits skip
            rows with the wrong column count instead, and log a warning with their number.
    """
    glue_task = get_glue_task(task)
    if split not in glue_task.split_files:
        raise TaskDataError(f"GLUE task {glue_task.name!r} has no split {split!r}; "
                            f"its splits: {', '.join(glue_task.splits)}")
    path = split_file(glue_task, data_dir, split)
    layout = glue_task.layout(split)
    is_test = glue_task.is_test(split)
    examples, skipped_lines = [], []
    rows = _numbered_rows(path)
    if layout.has_header and next(rows, None) is None:
        raise TaskDataError(f"{path}:1: the file is empty; expected a header row")
    for line_number, row in rows:
        where = f"{path}:{line_number}"
        problem = _row_problem(layout, row)
        if problem is not None:
            # A test file must stay complete: the leaderboard wants every row predicted.
            if is_test or not glue_task.skip_malformed_rows:
                raise TaskDataError(f"{where}: {problem}")
            skipped_lines.append(line_number)
            continue
        examples.append(TextExample(
            guid=row[layout.index] if is_test else f"{split}-{line_number}",
            text_a=row[layout.text_a],
            text_b=None if layout.text_b is None else row[layout.text_b],
            label=None if is_test else _parse_label(glue_task, layout, row, where)))
    if skipped_lines:
        logging.warning("%s: skipped %d malformed rows (wrong number of columns), the "
                        "first on line %d", path, len(skipped_lines), skipped_lines[0])
    return examples


def _prediction_text(task: GlueTask, prediction, position: int) -> str:
    """One prediction as the leaderboard wants it: a label string, or a score in [0, 5]."""
    if task.is_regression:
        score = float(prediction)
        if math.isnan(score):
            raise ValueError(f"prediction {position} is NaN; STS-B needs a score")
        return f"{min(max(score, 0.0), 5.0):.3f}"
    try:
        label_id = operator.index(prediction)  # ints, numpy ints; not floats
    except TypeError:
        label_id = -1
    if not 0 <= label_id < len(task.labels):
        raise ValueError(f"prediction {position} is {prediction!r}; expected a label index "
                         f"in [0, {len(task.labels) - 1}] of {task.labels}")
    return task.labels[label_id]


def write_glue_predictions(task: TaskLike, split: str, examples: Sequence[TextExample],
                           predictions: Sequence, output_dir: str) -> str:
    """Write the leaderboard file of one GLUE test split (e.g. `RTE.tsv`, `MNLI-mm.tsv`).

    The file is `index<TAB>prediction`, then one row per example in order: the example's
    guid (the test file's index) and its predicted label, or for STS-B its score clipped
    to [0, 5] with 3 decimals.

    Args:
        task: a task name or `GlueTask`.
        split: a test split with a leaderboard file (`test`; MNLI also `test_mismatched`
            and `ax`).
        examples: the split's examples as `read_glue` returns them.
        predictions: one per example: a label index (int) into `task.labels`, or for STS-B
            a float.
        output_dir: the folder to write to (created if missing).

    Returns:
        The path of the written file.

    Raises:
        ValueError: the split has no leaderboard file, the lengths differ, or a prediction
            is not a valid label index (a NaN score for STS-B).
    """
    glue_task = get_glue_task(task)
    if split not in glue_task.submission_files:
        raise ValueError(f"GLUE task {glue_task.name!r} has no leaderboard file for split "
                         f"{split!r}; splits with one: "
                         f"{', '.join(glue_task.submission_files)}")
    if len(examples) != len(predictions):
        raise ValueError(f"{len(examples)} examples but {len(predictions)} predictions")
    lines = ["index\tprediction"]
    for position, (example, prediction) in enumerate(zip(examples, predictions)):
        lines.append(f"{example.guid}\t{_prediction_text(glue_task, prediction, position)}")
    path = os.path.join(output_dir, glue_task.submission_files[split])
    atomic_write_bytes(path, ("\n".join(lines) + "\n").encode("utf-8"))
    return path


# The test split's gold labels, apart from `test.tsv` as in GLUE, in a task folder that
# `albert-data task` writes: `index<TAB>label` (or `index<TAB>score` for a similarity task).
TEST_LABELS_FILE = "test_labels.tsv"


def test_labels_path(data_dir: str) -> Optional[str]:
    """The folder's test labels file, or None when its test split is unlabelled (as the GLUE
    download's are)."""
    path = os.path.join(data_dir, TEST_LABELS_FILE)
    return path if os.path.isfile(path) else None


def read_labelled_test(task: TaskLike, data_dir: str) -> list[TextExample]:
    """The test split's examples (`read_glue`, in file order) with their gold labels from
    `test_labels.tsv`, joined on the index column.

    Raises:
        TaskDataError: no labels file; a labels row that is not `index<TAB>label`, repeats an
            index, names an index the test file lacks or holds an invalid label (the message
            names the file and line); or a test example without a label.
    """
    glue_task = get_glue_task(task)
    path = test_labels_path(data_dir)
    if path is None:
        raise TaskDataError(f"{data_dir}: no {TEST_LABELS_FILE}; the test split is unlabelled")
    examples = read_glue(glue_task, data_dir, "test")
    wanted = {example.guid for example in examples}
    layout = ColumnLayout(text_a=0, index=0, label=1, num_columns=2)  # text_a unused
    labels = {}
    rows = _numbered_rows(path)
    next(rows, None)  # the header
    for line_number, row in rows:
        where = f"{path}:{line_number}"
        if len(row) != 2:
            raise TaskDataError(f"{where}: expected 2 tab-separated columns (index, label), "
                                f"found {len(row)}")
        index = row[0]
        if index in labels or index not in wanted:
            reason = "repeats" if index in labels else "is not in the test file's"
            raise TaskDataError(f"{where}: index {index!r} {reason} index column")
        labels[index] = _parse_label(glue_task, layout, row, where)
    missing = [example.guid for example in examples if example.guid not in labels]
    if missing:
        raise TaskDataError(f"{path}: no label for test index {missing[0]!r} "
                            f"({len(missing)} of {len(examples)} unlabelled)")
    return [dataclasses.replace(example, label=labels[example.guid]) for example in examples]
