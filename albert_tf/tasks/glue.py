"""The GLUE benchmark's files: each task's TSV layout as data (`GLUE_TASKS`), a reader
(`read_glue`) and the leaderboard prediction writer (`write_glue_predictions`). No TensorFlow.

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
import types
import uuid
from typing import Iterator, Mapping, Optional, Sequence, Union

from albert_tf.tasks.examples import TaskDataError, TextExample

def _frozen(mapping: dict) -> Mapping:
    """A read-only view, so that the shared task table cannot be changed by accident."""
    return types.MappingProxyType(mapping)


# Label column value meaning "the last column of the row": MNLI's train file has one
# annotator label before the gold label, its dev files five, so only "last" names it in both.
LAST_COLUMN = -1

# GLUE texts contain unbalanced quotes (so quoting is off) and some are long.
_LARGEST_FIELD = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class ColumnLayout:
    """Where one kind of GLUE file keeps each field, as 0-based tab-separated columns.

    Args:
        text_a: column of the first (or only) text.
        text_b: column of the second text of a pair task, or None.
        label: column of the label, `LAST_COLUMN` for whichever column comes last, or None
            (test files).
        index: column of the file's own example id (test files), or None.
        has_header: whether line 1 names the columns instead of holding an example.
        num_columns: the exact column count of a well-formed row when the format fixes it,
            or None to require only enough columns for the fields above.
    """

    text_a: int
    text_b: Optional[int] = None
    label: Optional[int] = None
    index: Optional[int] = None
    has_header: bool = True
    num_columns: Optional[int] = None

    def fields(self) -> dict[str, int]:
        """The used fields and their columns, e.g. `{"text_a": 3, "label": 1}`."""
        named = {"index": self.index, "text_a": self.text_a, "text_b": self.text_b,
                 "label": self.label}
        return {name: column for name, column in named.items() if column is not None}

    def min_columns(self) -> int:
        """How many columns a row needs at least to hold every used field."""
        fixed = [column for column in self.fields().values() if column != LAST_COLUMN]
        needed = max(fixed) + 1
        return needed + 1 if self.label == LAST_COLUMN else needed

    def describe(self) -> str:
        """The fields in words with 1-based column numbers, for error messages."""
        return ", ".join(f"{name} in the last column" if column == LAST_COLUMN
                         else f"{name} in column {column + 1}"
                         for name, column in self.fields().items())


@dataclasses.dataclass(frozen=True)
class GlueTask:
    """One GLUE task: where its files are, what their columns hold and how it is scored.

    Args:
        name: our lower-case name (`cola`, `sst2`, ...), the key in `GLUE_TASKS`.
        folder: the folder of the GLUE download that holds the task (`CoLA`, `SST-2`, ...).
        labels: the label strings in a fixed order (a label's position is its class id);
            empty for the regression task STS-B.
        labelled_layout: the columns of the train and dev files.
        test_layout: the columns of the unlabelled test files.
        metrics: names of the scores the leaderboard reports, as in `albert_tf.tasks.metrics`.
        submission_files: split -> the file name the leaderboard expects for its predictions.
        split_files: split -> file names relative to the task folder, tried in order.
        test_splits: the splits without labels.
        split_layouts: split -> layout, for a split whose columns differ from the rest of
            its kind (MNLI's diagnostic set `ax`).
        is_regression: whether the label is a number (STS-B's similarity in [0, 5]).
        skip_malformed_rows: skip (and count) labelled rows with the wrong number of
            columns instead of failing; only for QQP, whose train file has a few broken rows.
            Test files are never skipped from: the leaderboard wants every row.
    """

    name: str
    folder: str
    labels: tuple[str, ...]
    labelled_layout: ColumnLayout
    test_layout: ColumnLayout
    metrics: tuple[str, ...]
    submission_files: Mapping[str, str]
    split_files: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=lambda: _frozen(
            {"train": ("train.tsv",), "dev": ("dev.tsv",), "test": ("test.tsv",)}))
    test_splits: tuple[str, ...] = ("test",)
    split_layouts: Mapping[str, ColumnLayout] = dataclasses.field(
        default_factory=lambda: _frozen({}))
    is_regression: bool = False
    skip_malformed_rows: bool = False

    @property
    def splits(self) -> tuple[str, ...]:
        """Every split of the task, labelled ones first."""
        return tuple(self.split_files)

    def is_test(self, split: str) -> bool:
        """Whether `split` is unlabelled (a leaderboard split)."""
        return split in self.test_splits

    def layout(self, split: str) -> ColumnLayout:
        """The column layout of `split`'s file."""
        if split in self.split_layouts:
            return self.split_layouts[split]
        return self.test_layout if self.is_test(split) else self.labelled_layout


_BINARY = ("0", "1")
_NLI = ("entailment", "not_entailment")
# A pair file whose test set is `index sentence1 sentence2` (QNLI, RTE, WNLI, MNLI's ax).
_INDEXED_PAIR_TEST = ColumnLayout(index=0, text_a=1, text_b=2)
_INDEXED_SENTENCE_TEST = ColumnLayout(index=0, text_a=1)

GLUE_TASKS: dict[str, GlueTask] = {task.name: task for task in (
    GlueTask("cola", "CoLA", _BINARY,
             labelled_layout=ColumnLayout(text_a=3, label=1, has_header=False),
             test_layout=_INDEXED_SENTENCE_TEST,
             metrics=("matthews_correlation",),
             submission_files=_frozen({"test": "CoLA.tsv"})),
    GlueTask("sst2", "SST-2", _BINARY,
             labelled_layout=ColumnLayout(text_a=0, label=1),
             test_layout=_INDEXED_SENTENCE_TEST,
             metrics=("accuracy",),
             submission_files=_frozen({"test": "SST-2.tsv"})),
    GlueTask("mrpc", "MRPC", _BINARY,
             labelled_layout=ColumnLayout(label=0, text_a=3, text_b=4),
             test_layout=ColumnLayout(index=0, text_a=3, text_b=4),
             metrics=("accuracy", "f1_score"),
             submission_files=_frozen({"test": "MRPC.tsv"})),
    GlueTask("stsb", "STS-B", (),
             labelled_layout=ColumnLayout(text_a=7, text_b=8, label=9),
             test_layout=ColumnLayout(index=0, text_a=7, text_b=8),
             metrics=("pearson", "spearman"),
             submission_files=_frozen({"test": "STS-B.tsv"}),
             is_regression=True),
    GlueTask("qqp", "QQP", _BINARY,
             labelled_layout=ColumnLayout(text_a=3, text_b=4, label=5, num_columns=6),
             test_layout=ColumnLayout(index=0, text_a=1, text_b=2, num_columns=3),
             metrics=("accuracy", "f1_score"),
             submission_files=_frozen({"test": "QQP.tsv"}),
             skip_malformed_rows=True),
    GlueTask("mnli", "MNLI", ("contradiction", "entailment", "neutral"),
             labelled_layout=ColumnLayout(text_a=8, text_b=9, label=LAST_COLUMN),
             test_layout=ColumnLayout(index=0, text_a=8, text_b=9),
             metrics=("accuracy",),
             submission_files=_frozen({"test": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv",
                                       "ax": "AX.tsv"}),
             split_files=_frozen({
                 "train": ("train.tsv",), "dev": ("dev_matched.tsv",),
                 "dev_mismatched": ("dev_mismatched.tsv",), "test": ("test_matched.tsv",),
                 "test_mismatched": ("test_mismatched.tsv",),
                 # The diagnostic set ships in its own folder beside MNLI's.
                 "ax": ("AX.tsv", os.path.join("..", "diagnostic", "diagnostic.tsv"))}),
             test_splits=("test", "test_mismatched", "ax"),
             split_layouts=_frozen({"ax": _INDEXED_PAIR_TEST})),
    GlueTask("qnli", "QNLI", _NLI,
             labelled_layout=ColumnLayout(text_a=1, text_b=2, label=3),
             test_layout=_INDEXED_PAIR_TEST,
             metrics=("accuracy",),
             submission_files=_frozen({"test": "QNLI.tsv"})),
    GlueTask("rte", "RTE", _NLI,
             labelled_layout=ColumnLayout(text_a=1, text_b=2, label=3),
             test_layout=_INDEXED_PAIR_TEST,
             metrics=("accuracy",),
             submission_files=_frozen({"test": "RTE.tsv"})),
    GlueTask("wnli", "WNLI", _BINARY,
             labelled_layout=ColumnLayout(text_a=1, text_b=2, label=3),
             test_layout=_INDEXED_PAIR_TEST,
             metrics=("accuracy",),
             submission_files=_frozen({"test": "WNLI.tsv"})),
)}

TaskLike = Union[str, GlueTask]


def get_glue_task(task: TaskLike) -> GlueTask:
    """The `GlueTask` named `task`: our name or the GLUE folder name, any case (`SST-2`).

    Args:
        task: a task name or a `GlueTask` (returned as is).

    Raises:
        TaskDataError: the name is not a GLUE task; the message lists the known ones.
    """
    if isinstance(task, GlueTask):
        return task
    key = task.lower().replace("-", "")
    if key not in GLUE_TASKS:
        raise TaskDataError(
            f"unknown GLUE task {task!r}; known tasks: {', '.join(GLUE_TASKS)}")
    return GLUE_TASKS[key]


def find_split_file(task: GlueTask, data_dir: str, split: str) -> Optional[str]:
    """The first existing file of `split`, looked for in `data_dir` itself and then in its
    subfolder named like the task (so the GLUE download's root works too)."""
    for name in task.split_files[split]:
        for folder in (data_dir, os.path.join(data_dir, task.folder)):
            path = os.path.normpath(os.path.join(folder, name))
            if os.path.isfile(path):
                return path
    return None


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

    Lines are decoded one by one so that a bad byte is reported with its line.
    """
    csv.field_size_limit(max(csv.field_size_limit(), _LARGEST_FIELD))

    def decoded_lines(binary) -> Iterator[str]:
        for line_number, raw in enumerate(binary, start=1):
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise TaskDataError(f"{path}:{line_number}: not UTF-8 text "
                                    f"(byte {error.start + 1} of the line)") from None

    with open(path, "rb") as binary:
        reader = csv.reader(decoded_lines(binary), delimiter="\t", quotechar=None)
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
    path = find_split_file(glue_task, data_dir, split)
    if path is None:
        expected = " or ".join(glue_task.split_files[split])
        raise TaskDataError(f"GLUE {glue_task.folder} split {split!r} needs {expected} in "
                            f"{data_dir} (or in {os.path.join(data_dir, glue_task.folder)}); "
                            f"not found")
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


def write_text_atomically(path: str, text: str) -> str:
    """Write `text` (UTF-8, `\\n` line ends) to `path` so that readers never see a partial
    file: a temporary file beside it, then a rename over it.

    Args:
        path: the file to create or replace; its folder is created if missing.
        text: the whole content.

    Returns:
        `path`.
    """
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    try:
        with open(temporary, "x", encoding="utf-8", newline="\n") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
    return path


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
    return write_text_atomically(path, "\n".join(lines) + "\n")
