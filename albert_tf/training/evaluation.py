"""Intrinsic evaluation of a pretrained checkpoint, as the paper's Table 6 reports it.

Three accuracies, and the spread of the encoder's outputs across inputs (0 when it has
collapsed to one output for everything, `albert_tf.training.collapse`): masked-LM (every
masked piece, weighted as in training), NSP-style (the
sentence head on shards built with `--sentence_objective nsp`: 1 = the second segment comes
from another document) and SOP-style (on shards built with `sop`: 1 = the two segments are
swapped). The same 2-way head answers both; a model trained with `none` has no sentence
head, so only its MLM accuracy exists.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping, Sequence

import numpy as np
import tensorflow as tf

from albert_tf.config.pretraining import PretrainConfig
from albert_tf.data.pretraining import PretrainingDataConfig, pretraining_dataset
from albert_tf.data.validation import DataError, check_pretraining_files, shard_lengths
from albert_tf.models.pretrainer import AlbertPretrainer
from albert_tf.models.training_step import correct_predictions
from albert_tf.training.collapse import representation_spread

TASKS = ("mlm", "nsp", "sop")


def _ordered_batches(config: PretrainConfig, files: Sequence[str], batch_size: int,
                     field: str):
    """One ordered pass over `files` in batches, at the lengths the shards were built with
    (not the run config's), so a model scores shards of any length up to its
    `max_position_embeddings`."""
    max_seq_length, max_predictions = shard_lengths(files, field)
    if max_seq_length > config.model.max_position_embeddings:
        raise DataError(f"{field}: the shards hold sequences of {max_seq_length} tokens, more "
                        f"than the model's max_position_embeddings "
                        f"({config.model.max_position_embeddings})")
    data_config = PretrainingDataConfig(
        file_patterns=tuple(files), max_seq_length=max_seq_length,
        max_predictions_per_seq=max_predictions, global_batch_size=batch_size,
        is_training=False)
    data_config = dataclasses.replace(
        data_config, file_patterns=tuple(check_pretraining_files(data_config, field)))
    return pretraining_dataset(data_config)


def evaluate_files(model: AlbertPretrainer, config: PretrainConfig, files: Sequence[str],
                   batch_size: int, max_batches: int | None = None,
                   field: str = "files") -> dict[str, float]:
    """Weighted MLM and sentence metrics over one ordered pass of `files` (or `max_batches`)."""
    results = model.evaluate(_ordered_batches(config, files, batch_size, field),
                             steps=max_batches, return_dict=True, verbose=0)
    return {name: float(value) for name, value in results.items()}


def example_outcomes(model: AlbertPretrainer, config: PretrainConfig, files: Sequence[str],
                     batch_size: int, max_batches: int | None = None,
                     field: str = "files") -> dict[str, np.ndarray]:
    """Whether the model was right, prediction by prediction, over the pass of `files` that
    `evaluate_files` scores (the same batches, in the same order): what a paired comparison
    of two models on the same held-out examples needs.

    Returns `mlm_correct` (bool) and `mlm_labels` (int32), one per masked prediction (those
    of weight 1; padding slots of weight 0 left out), and for a model with a sentence head
    `sentence_correct` and `sentence_labels`, one per example. The mean of `mlm_correct` is
    `evaluate_files`' `mlm_accuracy`. Raises DataError if a prediction's weight is neither 0
    nor 1 (a weighted accuracy has no per-prediction outcome)."""
    batches = _ordered_batches(config, files, batch_size, field)
    if max_batches is not None:
        batches = batches.take(max_batches)

    @tf.function
    def outcomes(features):
        outputs = model(features, training=False)
        found = {"mlm_correct": correct_predictions(outputs["mlm_logits"],
                                                    features["masked_lm_ids"]),
                 "mlm_labels": features["masked_lm_ids"],
                 "mlm_weights": features["masked_lm_weights"]}
        if "sentence_logits" in outputs:
            labels = tf.reshape(features["next_sentence_labels"], [-1])
            found["sentence_correct"] = correct_predictions(outputs["sentence_logits"], labels)
            found["sentence_labels"] = labels
        return found

    parts: dict[str, list[np.ndarray]] = {}
    for features in batches:
        for name, value in outcomes(features).items():
            parts.setdefault(name, []).append(value.numpy().reshape(-1))
    if not parts:
        raise DataError(f"{field}: no examples to score")
    found = {name: np.concatenate(values) for name, values in parts.items()}
    weights = found.pop("mlm_weights")
    if not np.isin(weights, (0.0, 1.0)).all():
        raise DataError(f"{field}: masked_lm_weights other than 0 and 1 (e.g. "
                        f"{weights[~np.isin(weights, (0.0, 1.0))][0]}); per-prediction "
                        f"outcomes need unweighted predictions")
    kept = weights == 1.0
    outcomes_by_name = {"mlm_correct": found["mlm_correct"][kept] == 1.0,
                        "mlm_labels": found["mlm_labels"][kept].astype(np.int32)}
    if "sentence_correct" in found:
        outcomes_by_name["sentence_correct"] = found["sentence_correct"] == 1.0
        outcomes_by_name["sentence_labels"] = found["sentence_labels"].astype(np.int32)
    return outcomes_by_name


def spread_on_files(model: AlbertPretrainer, config: PretrainConfig, files: Sequence[str],
                    batch_size: int, max_batches: int = 8,
                    field: str = "files") -> dict[str, float]:
    """`representation_spread` of the encoder over the first `max_batches` batches of
    `files` (see `albert_tf.training.collapse`)."""
    batches = _ordered_batches(config, files, batch_size, field).take(max_batches)
    return representation_spread(model.encoder, batches)


def table6_row(results: Mapping[str, Mapping[str, float]]) -> dict[str, float | None]:
    """{task: accuracy} from per-set results: MLM from the `mlm` set (else the `sop`, else the
    `nsp` set), NSP and SOP from the sentence head on their own sets (None where not
    measured)."""
    row: dict[str, float | None] = {task: None for task in TASKS}
    for source in ("mlm", "sop", "nsp"):
        if source in results:
            row["mlm"] = results[source].get("mlm_accuracy")
            break
    for task in ("nsp", "sop"):
        row[task] = results.get(task, {}).get("sentence_accuracy")
    return row
