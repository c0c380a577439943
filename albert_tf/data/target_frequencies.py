"""How often each piece is a masked-LM target in pretraining shards, and the log prior of that.

A model whose masked-LM output bias starts at zero must first learn the unigram distribution
of the targets, log frequencies spread over about ten nats. Adam moves a bias by at most about
the learning rate per step, so the bias alone needs thousands of steps to get there, and a
small model finds a faster way: it writes the unigram into its hidden states as one vector
shared by every token. In a post-LN stack that shared vector outgrows the token-dependent
part, each LayerNorm shrinks the latter further, and at a high learning rate the encoder ends
up giving the same output for every input, with no gradient left to undo it (measured on the
CPU presets; see docs/pretraining.md, "The small-model recipe"). Starting the bias at the
log prior this module computes removes the reason for that shortcut.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import tensorflow as tf

from albert_tf.data.pretraining import list_shards
from albert_tf.data.validation import DataError


def masked_target_counts(file_patterns: Sequence[str], max_predictions: int, vocab_size: int,
                         max_examples: int) -> tuple[np.ndarray, int]:
    """Weighted counts of each id among the masked-LM targets of the first `max_examples`
    examples of the shards (read in a fixed order, interleaved over all files).

    Returns `(counts, examples)`: float64 counts of shape `(vocab_size,)` and the number of
    examples read. Raises `DataError` naming the largest id when a target lies outside
    the vocabulary.
    """
    files = list_shards(file_patterns)
    spec = {"masked_lm_ids": tf.io.FixedLenFeature([max_predictions], tf.int64),
            "masked_lm_weights": tf.io.FixedLenFeature([max_predictions], tf.float32)}
    records = tf.data.Dataset.from_tensor_slices(files).interleave(
        tf.data.TFRecordDataset, cycle_length=len(files))  # sequential: a fixed order
    batches = records.take(max_examples).batch(1024).map(
        lambda serialized: tf.io.parse_example(serialized, spec))
    counts = np.zeros(vocab_size, np.float64)
    examples = 0
    for batch in batches.as_numpy_iterator():
        ids, weights = batch["masked_lm_ids"].ravel(), batch["masked_lm_weights"].ravel()
        ids, weights = ids[weights > 0], weights[weights > 0]
        if ids.size and (ids.max() >= vocab_size or ids.min() < 0):
            raise DataError(
                f"{', '.join(file_patterns)}: masked-LM target id {ids.max()} is outside the "
                f"model's vocabulary of {vocab_size} pieces (model.vocab_size); were the shards "
                f"built with another SentencePiece model?")
        counts += np.bincount(ids, weights=weights, minlength=vocab_size)
        examples += len(batch["masked_lm_ids"])
    return counts, examples


def log_prior(counts: np.ndarray) -> np.ndarray:
    """log p(id) with add-one smoothing, shifted to mean 0 (softmax ignores the shift; it
    keeps the bias values small), as float32 of the counts' shape."""
    smoothed = np.asarray(counts, np.float64) + 1.0
    log_probabilities = np.log(smoothed / smoothed.sum())
    return (log_probabilities - log_probabilities.mean()).astype(np.float32)
