"""`classify` and `regress` on the user's own train/dev/test files (CSV, TSV, JSON Lines).

Everything but the reading is the GLUE tasks' (`GlueTask`: conversion, the classifier or
regressor, the metrics): classification is scored by accuracy, regression by Pearson (which
picks the best checkpoint), Spearman and the mean squared error, as STS-B is. The label set
is the training file's, sorted (or `data.labels`), and is kept in the run's `finetune.yaml`,
so the run's model, its export and `albert-predict` name the classes as training did.

Every file is read and checked before anything is written (`check_inputs`); predictions
(dev, and test when given) are written as the input rows with the prediction columns
beside them (`albert_tf.task_data.predicted_rows`), in the input's format.
"""

from __future__ import annotations

import dataclasses
import os
import types

from albert_tf.config.finetuning import OWN_REGRESSION, FinetuneConfig
from albert_tf.finetuning.glue_task import GlueTask
from albert_tf.task_data import own_files, predicted_rows
from albert_tf.task_data.examples import TaskDataError
from albert_tf.task_data.glue_table import ColumnLayout
from albert_tf.task_data.glue_table import GlueTask as GlueSpec
from albert_tf.task_data.table_files import read_table

_NO_COLUMNS = ColumnLayout(text_a=0)  # unused: the files are read by own_files


def own_files_spec(name: str, labels: tuple[str, ...]) -> GlueSpec:
    """The task as the GLUE code describes one: its labels and metrics."""
    regression = name == OWN_REGRESSION
    return GlueSpec(name, folder="", labels=() if regression else labels,
                    labelled_layout=_NO_COLUMNS, test_layout=_NO_COLUMNS,
                    metrics=("pearson", "spearman") if regression else ("accuracy",),
                    submission_files=types.MappingProxyType({}), is_regression=regression)


class OwnFilesTask(GlueTask):
    """The task of `data.train_file`, `data.dev_file` (and `data.test_file`)."""

    writes_dev_predictions = True

    def __init__(self, name: str, config: FinetuneConfig):
        super().__init__(name, config, own_files_spec(name, config.data.labels))
        data = config.data
        self.columns = own_files.OwnColumns(data.text_column, data.text_pair_column or None,
                                            data.label_column)
        self.files = {"train": data.train_file, "dev": data.dev_file, "test": data.test_file}
        self.predict_splits = ("test",) if data.test_file else ()
        self._examples: dict[str, list] = {}

    def check_inputs(self) -> FinetuneConfig:
        """Reads and checks every file (before anything is written) and fixes the label set;
        returns the config the run keeps, with that set in `data.labels`."""
        missing = [f"data.{split}_file (--{split}_file)" for split in ("train", "dev")
                   if not self.files[split]]
        if missing:
            raise TaskDataError(f"task {self.name} on your own files needs "
                                f"{' and '.join(missing)}: the dev file chooses the best "
                                f"checkpoint")
        own_files.check_formats(*(path for path in self.files.values() if path))
        for path in self.files.values():
            if path and not os.path.isfile(path):
                raise TaskDataError(f"{path}: no such file")
        train = self._read("train", None)
        if not self.spec.is_regression:
            self._set_labels(train)
        for split in ("dev", *self.predict_splits):
            self._read(split, self.labels)
        data = dataclasses.replace(self.config.data, labels=self.labels or ())
        self.config = dataclasses.replace(self.config, data=data)
        return self.config

    def _set_labels(self, train: list) -> None:
        found = own_files.label_set(train)
        given = self.config.data.labels
        unknown = [label for label in found if label not in given]
        if given and unknown:
            raise TaskDataError(f"{self.files['train']}: labels {unknown} are not in "
                                f"data.labels {list(given)}")
        labels = given or found
        if len(labels) < 2:
            raise TaskDataError(f"{self.files['train']}: column {self.columns.label!r} holds "
                                f"one label ({labels[0]!r}); classification needs two or more")
        self.spec = own_files_spec(self.name, tuple(labels))
        self.labels = self.spec.labels

    def _read(self, split: str, labels) -> list:
        path = self.files[split]
        labelled = split != "test" or own_files.has_labels(path, self.columns)
        self._examples[split] = own_files.read_split(
            path, self.columns, self.spec.is_regression, labels, labelled)
        return self._examples[split]

    def source_files(self, split: str) -> list[str]:
        return [self.files[split]]

    def has_split(self, split: str) -> bool:
        return bool(self.files.get(split))

    def has_labels(self, split: str) -> bool:
        return split == "test" and self.read(split)[0].label is not None

    def read(self, split: str) -> list:
        if split not in self._examples:
            self._read(split, self.labels)
        return self._examples[split]

    def conversion_settings(self):
        return {**super().conversion_settings(), "columns": dataclasses.asdict(self.columns),
                "labels": list(self.labels or ())}

    def constant_score(self, examples, features):
        if examples and examples[0].label is None:
            return None
        return super().constant_score(examples, features)

    def write_predictions(self, split, examples, features, outputs, output_dir):
        """`<split>.<format>`: the split's rows with the prediction columns."""
        path = self.files[split]
        kind = self.kind
        if kind == "classification":
            outputs = {"probabilities": predicted_rows.softmax(outputs["logits"])}
        added = predicted_rows.prediction_columns(kind, self.labels)
        values = predicted_rows.prediction_values(kind, outputs, self.labels)
        output = os.path.join(output_dir, split + os.path.splitext(path)[1].lower())
        predicted_rows.write_predicted_rows(
            output, predicted_rows.output_columns(path, added), zip(read_table(path), values))
        return [output]
