"""What every fine-tuning task is to the runner (`FinetuneTask`), and how rows of ids are
packed for the sentence tasks (`pack_pairs`). The tasks: `task_kinds` (GLUE, SQuAD, RACE,
by name), `own_files` (the user's own files)."""

from __future__ import annotations

import abc
import os
from typing import Any, Sequence

import numpy as np

from albert_tf.models.encoder import INPUT_NAMES
from albert_tf.tokenization import AlbertTokenizer


def pack_pairs(tokenizer: AlbertTokenizer, first: Sequence[Sequence[int]],
               second: Sequence[Sequence[int]] | None, max_seq_length: int
               ) -> dict[str, np.ndarray]:
    """Encoder inputs `(N, max_seq_length)` for rows of ids: `[CLS] a [SEP] (b [SEP])`,
    truncated as the original did and zero-padded to `max_seq_length`."""
    arrays = {name: np.zeros((len(first), max_seq_length), np.int32) for name in INPUT_NAMES}
    chunk = 4096  # `pack` pads to a chunk's longest row; copy chunks into the full width
    for begin in range(0, len(first), chunk):
        rows = slice(begin, begin + chunk)
        packed = tokenizer.pack(first[rows], None if second is None else second[rows],
                                max_seq_length)
        for name in INPUT_NAMES:
            arrays[name][rows, :packed[name].shape[1]] = packed[name]
    return arrays

class FinetuneTask(abc.ABC):
    """The contract the runner uses; see the subclasses."""

    kind = ""
    labels: tuple[str, ...] | None = None  # a classification's class names, by index
    primary_metric = ""
    label_features: tuple[str, ...] = ()
    eval_splits: tuple[str, ...] = ("dev",)
    predict_splits: tuple[str, ...] = ("test",)
    trims_eval_batches = True  # outputs do not depend on the padded length
    writes_dev_predictions = True  # GLUE leaderboards take test files only

    def __init__(self, name: str, config):
        self.name = name
        self.config = config

    @property
    def data_dir(self) -> str:
        return self.config.data.data_dir

    def has_split(self, split: str) -> bool:
        return all(os.path.exists(path) for path in self.source_files(split))

    @abc.abstractmethod
    def source_files(self, split: str) -> list[str]:
        """The files (or folders) `split` is read from; their bytes key the feature cache."""

    @abc.abstractmethod
    def read(self, split: str) -> list:
        """The split's examples (`albert_tf.task_data.examples` records)."""

    @abc.abstractmethod
    def convert(self, examples: list, tokenizer: AlbertTokenizer,
                is_training: bool) -> dict[str, np.ndarray]:
        """Model features for `examples`: equally long numpy arrays, one row per example
        (per window for SQuAD), the encoder inputs padded to `max_seq_length`."""

    @abc.abstractmethod
    def build_model(self, model_config):
        """The task model on an encoder of `model_config`."""

    @abc.abstractmethod
    def evaluate(self, examples: list, features: dict[str, np.ndarray],
                 outputs: dict[str, np.ndarray]) -> dict[str, float]:
        """The task's dev metrics from the model outputs on `features` (the one
        `primary_metric` names picks the best checkpoint)."""

    @abc.abstractmethod
    def write_predictions(self, split: str, examples: list, features: dict[str, np.ndarray],
                          outputs: dict[str, np.ndarray], output_dir: str) -> list[str]:
        """Writes the split's prediction files into `output_dir`; returns their paths."""

    def check_inputs(self):
        """Reads and checks what must be right before the run writes anything; returns the
        config the run keeps (with what the inputs decided). Tasks whose files are read as
        they are converted check nothing here."""
        return self.config

    def has_labels(self, split: str) -> bool:
        """Whether `split`, one of `predict_splits`, comes with gold labels to score it on
        (a task folder's test labels); the dev splits always do."""
        return False

    def constant_score(self, examples: list, features: dict[str, np.ndarray]) -> float | None:
        """The best `primary_metric` a model that gives every example the same answer reaches
        on a labelled split (the majority class's share for accuracy); None where no such
        floor is defined (span tasks). A fine-tune scoring within a point of it has learned
        nothing (`albert_tf.finetuning.stuck`)."""
        return None

    @property
    def model_features(self) -> tuple[str, ...]:
        return INPUT_NAMES + self.label_features

    def conversion_settings(self) -> dict[str, Any]:
        return {"max_seq_length": self.config.data.max_seq_length}
