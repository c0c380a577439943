"""The GLUE tasks as data: each task's folder, files, TSV column layouts, labels, metrics
and leaderboard file names (`GLUE_TASKS`). No TensorFlow."""

from __future__ import annotations

import dataclasses
import json
import os
import types
from typing import Mapping, Optional, Union

from albert_tf.config.finetuning import FOLDER_CLASSIFICATION
from albert_tf.io.files import exists, read_bytes
from albert_tf.task_data.examples import TaskDataError


def _frozen(mapping: dict) -> Mapping:
    """A read-only view, so that the shared task table cannot be changed by accident."""
    return types.MappingProxyType(mapping)


# Label column value meaning "the last column of the row": MNLI's train file has one
# annotator label before the gold label, its dev files five, so only "last" names it in both.
LAST_COLUMN = -1


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
        metrics: names of the scores the leaderboard reports, as in `albert_tf.task_data.metrics`.
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


FOLDER_DESCRIPTION = "source.json"


def folder_classification_task(data_dir: str) -> GlueTask:
    """Single-text classification over the labels a task folder names: SST-2's columns
    (`sentence`, `label`; test files `index`, `sentence`), its label set from the folder's
    `source.json` (its `labels` list, as `albert-data task` writes it), scored by accuracy.

    Raises:
        TaskDataError: the folder has no `source.json` listing two or more labels.
    """
    path = os.path.join(data_dir, FOLDER_DESCRIPTION)
    if not exists(path):
        raise TaskDataError(f"{path}: not found; task {FOLDER_CLASSIFICATION!r} reads its labels "
                            f"from the source.json `albert-data task` writes beside the TSVs")
    labels = json.loads(read_bytes(path)).get("labels")
    if not (isinstance(labels, list) and len(labels) >= 2):
        raise TaskDataError(f"{path}: field 'labels' must list the task's labels (two or "
                            f"more), got {labels!r}")
    return dataclasses.replace(
        GLUE_TASKS["sst2"], name=FOLDER_CLASSIFICATION, folder=os.path.basename(data_dir),
        labels=tuple(str(label) for label in labels),
        submission_files=_frozen({"test": f"{FOLDER_CLASSIFICATION}.tsv"}))
