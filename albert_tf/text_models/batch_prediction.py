"""Predictions for every row of a table file (CSV, TSV, JSON Lines), streamed: what
`albert-predict` runs.

Rows are read, predicted and written a chunk at a time, so memory holds one chunk whatever
the file's size. The model is a raw-text model (`load_text_model`: a fine-tuning run or a
`.keras` file), tokenized by its own preprocessor as in training, or an exported SavedModel
(`serving_default` / `serving_pairs`, which tokenize in its graph). Each output row is the
input row with the prediction columns of `albert_tf.task_data.predicted_rows` beside it.

    predictor = model_predictor(load_text_model("runs/reviews"), InputColumns(text="review"))
    predict_file(predictor, "new.csv", "new_predicted.csv", batch_size=256)
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import tensorflow as tf
from tqdm import tqdm

from albert_tf.export.loading import load_saved_model
from albert_tf.task_data import predicted_rows
from albert_tf.task_data.examples import TaskDataError
from albert_tf.task_data.table_files import TableRow, read_table, table_format
from albert_tf.text_models.classifier import TextClassifier, TextRegressor
from albert_tf.text_models.multiple_choice import TextMultipleChoice
from albert_tf.text_models.span_extractor import TextSpanExtractor

ROWS_PER_CHUNK_BATCHES = 8  # rows are read this many batches at a time (bounded memory)


@dataclasses.dataclass(frozen=True)
class InputColumns:
    """Which input columns (JSON keys) feed the model: `text` and `text_pair` (classifier,
    regressor; `text_pair` empty for single texts), `question` and `context` (spans),
    `context`, `question` and `options` (multiple choice: a JSON list of option texts)."""

    text: str = "text"
    text_pair: str = ""
    question: str = "question"
    context: str = "context"
    options: str = "options"


@dataclasses.dataclass
class Predictor:
    """A model as `predict_file` drives it.

    Attributes:
        kind: `classification`, `regression`, `span` or `multiple_choice`.
        columns: the input columns it reads, in the order `run` takes them.
        run: {column: values of a chunk} -> the outputs `predicted_rows.prediction_values`
            reads, one row per input row.
        labels: the class names (classification).
        num_choices, options_column: multiple choice: the options per row, and the column
            holding them (a JSON list).
    """

    kind: str
    columns: tuple[str, ...]
    run: Callable[[Mapping[str, list]], Mapping[str, np.ndarray]]
    labels: Sequence[str] | None = None
    num_choices: int = 0
    options_column: str | None = None

    @property
    def added_columns(self) -> list[str]:
        return predicted_rows.prediction_columns(self.kind, self.labels, self.num_choices)


def model_predictor(model, columns: InputColumns = InputColumns()) -> Predictor:
    """A raw-text model (`albert_tf.text_models`) as a `Predictor`."""
    if isinstance(model, TextSpanExtractor):
        return Predictor("span", (columns.question, columns.context),
                         lambda chunk: model.predict((chunk[columns.question],
                                                      chunk[columns.context]), verbose=0))
    if isinstance(model, TextMultipleChoice):
        names = (columns.context, columns.question, columns.options)
        run = _graph_runner(model, dict(zip(("context", "question", "options"), names)),
                            lambda outputs: {"probabilities": tf.nn.softmax(
                                outputs["choice_logits"], -1)})
        return Predictor("multiple_choice", names, run, num_choices=model.num_choices,
                         options_column=columns.options)
    names = {"text": columns.text, **({"text_pair": columns.text_pair}
                                      if columns.text_pair else {})}
    if isinstance(model, TextClassifier):
        labels = model.labels or tuple(str(index) for index in range(model.num_classes))
        run = _graph_runner(model, names, lambda outputs: {
            "probabilities": outputs["probabilities"]})
        return Predictor("classification", tuple(names.values()), run, labels)
    if isinstance(model, TextRegressor):
        run = _graph_runner(model, names, lambda outputs: {
            "predictions": outputs["predictions"]})
        return Predictor("regression", tuple(names.values()), run)
    raise TypeError(f"no batch prediction for a {type(model).__name__}")


def _graph_runner(model, names: Mapping[str, str], select):
    """Texts -> the model's outputs in one `tf.function`: its preprocessor, then the model
    (no `tf.data` per chunk)."""

    @tf.function(reduce_retracing=True)
    def run(batch):
        return select(model(model.features(batch), training=False))

    def call(chunk: Mapping[str, list]) -> dict[str, np.ndarray]:
        batch = {ours: tf.constant(chunk[theirs], tf.string) for ours, theirs in names.items()}
        return {name: value.numpy() for name, value in run(batch).items()}

    return call


def saved_model_predictor(path: str, columns: InputColumns = InputColumns()) -> Predictor:
    """An exported classifier or regressor (`albert-export` of a run or `.keras` file) as a
    `Predictor`: its `serving_default` (or `serving_pairs`), labels from its metadata."""
    facts = _export_facts(path)
    serving = load_saved_model(path).signatures
    pairs = bool(columns.text_pair)
    signature = serving["serving_pairs" if pairs else "serving_default"]
    outputs = set(signature.structured_outputs)
    names = (columns.text, columns.text_pair) if pairs else (columns.text,)

    def call(chunk):
        texts = {"text": tf.constant(chunk[columns.text], tf.string)}
        if pairs:
            texts["text_pair"] = tf.constant(chunk[columns.text_pair], tf.string)
        found = signature(**texts)
        return {name: found[name].numpy() for name in ("probabilities", "predictions")
                if name in found}

    if "probabilities" in outputs:
        classes = signature.structured_outputs["probabilities"].shape[-1]
        labels = facts.get("labels") or [str(index) for index in range(classes)]
        return Predictor("classification", names, call, labels)
    if "predictions" in outputs:
        return Predictor("regression", names, call)
    raise TaskDataError(f"{path}: albert-predict runs exported classifiers and regressors "
                        f"(outputs 'probabilities' or 'predictions'); this SavedModel has "
                        f"{sorted(outputs)}: run the fine-tuning run or .keras file instead")


def _export_facts(path: str) -> dict[str, Any]:
    facts = os.path.join(path, "assets.extra", "albert_export.json")
    if not os.path.isfile(facts):
        return {}
    with open(facts, encoding="utf-8") as f:
        return json.load(f)


def predict_file(predictor: Predictor, input_path: str, output_path: str,
                 batch_size: int = 64, progress: bool = True) -> int:
    """Writes `output_path` (its own format, by extension): every row of `input_path` with
    its prediction columns; returns the number of rows."""
    columns = predicted_rows.output_columns(input_path, predictor.added_columns)
    with tqdm(total=_row_estimate(input_path), unit=" rows", desc="albert-predict",
              disable=not progress) as bar:
        run = _FileRun(predictor, input_path, batch_size, bar)
        written = predicted_rows.write_predicted_rows(output_path, columns, run.rows())
        bar.total = written  # the estimate is off when quoted fields hold line breaks
        bar.refresh()
    return written


def _row_estimate(path: str, block_bytes: int = 1 << 20) -> int:
    """The file's rows, read a block at a time: its lines (one more when the last has no line
    break), less the header of CSV and TSV; quoted line breaks in CSV count as rows."""
    lines, last = 0, b"\n"
    with open(path, "rb") as f:
        while block := f.read(block_bytes):
            lines += block.count(b"\n")
            last = block[-1:]
    lines += last != b"\n"
    return max(lines - (table_format(path) != "jsonl"), 0)


class _FileRun:
    """The rows of one input file with their predictions, a chunk of batches at a time."""

    def __init__(self, predictor: Predictor, path: str, batch_size: int, bar):
        self.predictor, self.path, self.batch_size, self.bar = predictor, path, batch_size, bar

    def rows(self) -> Iterator[tuple[TableRow, dict[str, Any]]]:
        chunk: list[TableRow] = []
        for row in read_table(self.path):
            chunk.append(row)
            if len(chunk) == self.batch_size * ROWS_PER_CHUNK_BATCHES:
                yield from self._predicted(chunk)
                chunk = []
        if chunk:
            yield from self._predicted(chunk)

    def _predicted(self, chunk: list[TableRow]):
        predictor = self.predictor
        values = {name: [self._cell(row, name) for row in chunk] for name in predictor.columns}
        found = []
        for start in range(0, len(chunk), self.batch_size):
            outputs = predictor.run({name: column[start:start + self.batch_size]
                                     for name, column in values.items()})
            found += predicted_rows.prediction_values(predictor.kind, outputs,
                                                      predictor.labels)
        self.bar.update(len(chunk))
        return zip(chunk, found)

    def _cell(self, row: TableRow, name: str):
        """One input value: a text, or (the options column) a list of `num_choices` texts."""
        where = f"{self.path}:{row.line}"
        if name not in row.values:
            raise TaskDataError(f"{where}: no column {name!r}; the row has "
                                f"{', '.join(repr(key) for key in row.values)}")
        value = row.values[name]
        if name == self.predictor.options_column:
            return self._options(value, name, where)
        if not isinstance(value, str):
            raise TaskDataError(f"{where}: column {name!r} holds {json.dumps(value)}; "
                                f"expected text")
        return value

    def _options(self, value, name: str, where: str) -> list[str]:
        try:
            options = json.loads(value) if isinstance(value, str) else value
        except ValueError:
            options = None
        count = self.predictor.num_choices
        if not (isinstance(options, list) and len(options) == count
                and all(isinstance(option, str) for option in options)):
            raise TaskDataError(f"{where}: column {name!r} must hold a JSON list of {count} "
                                f"option texts, got {value!r}")
        return options
