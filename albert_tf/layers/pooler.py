"""Sentence vectors from the encoder: the pooler (the first, [CLS], position's hidden vector
through dense + tanh) and the mean of the sequence output over each example's real pieces.

The pooled output is what only the sentence objective (SOP or NSP) trains; the mean reads
every position, which the masked LM trains, so it is the sentence vector of a model whose
sentence objective learned little or was off (`SENTENCE_POOLINGS`, the fine-tuning heads'
choice).
"""

from __future__ import annotations

import tensorflow as tf
import tf_keras

from albert_tf.config import SENTENCE_POOLINGS
from albert_tf.layers.common import build_sublayer, truncated_normal


def masked_mean(sequence: tf.Tensor, input_mask: tf.Tensor) -> tf.Tensor:
    """The mean of `sequence` over the positions where `input_mask` is 1.

    Args:
        sequence: `(batch_size, seq_length, hidden_size)`, any float dtype.
        input_mask: `(batch_size, seq_length)`, 1 for a real piece and 0 for padding.

    Returns:
        `(batch_size, hidden_size)` in `sequence`'s dtype (summed in float32, so a long
        sequence cannot overflow float16); zeros for a row without a real piece.
    """
    # expand_dims, not `[..., None]`: LiteRT has no kernel for that strided slice.
    mask = tf.expand_dims(tf.cast(input_mask, tf.float32), -1)
    total = tf.reduce_sum(tf.cast(sequence, tf.float32) * mask, axis=1)
    return tf.cast(total / tf.maximum(tf.reduce_sum(mask, axis=1), 1.0), sequence.dtype)


def check_pooling(pooling: str) -> str:
    """`pooling`, if it is one of `SENTENCE_POOLINGS`; a ValueError that names them
    otherwise."""
    if pooling not in SENTENCE_POOLINGS:
        raise ValueError(f"pooling must be one of {', '.join(SENTENCE_POOLINGS)}, "
                         f"got {pooling!r}")
    return pooling


def sentence_vector(encoded: dict[str, tf.Tensor], input_mask: tf.Tensor,
                    pooling: str) -> tf.Tensor:
    """`(batch_size, hidden_size)`: the encoder outputs' `pooled_output` for `cls`, the
    `masked_mean` of its `sequence_output` for `mean`."""
    if check_pooling(pooling) == "cls":
        return encoded["pooled_output"]
    return masked_mean(encoded["sequence_output"], input_mask)


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class Pooler(tf_keras.layers.Layer):
    """tanh(W h_0 + b) on the first token of each sequence.

    Args:
        hidden_size: int, H (output width).
        initializer_range: float, stddev of the truncated-normal initializer.

    Call arguments:
        sequence: `(batch_size, seq_length, hidden_size)`.

    Returns:
        `(batch_size, hidden_size)`.
    """

    def __init__(self, hidden_size: int, initializer_range: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.initializer_range = initializer_range
        self.dense = tf_keras.layers.Dense(
            hidden_size, activation="tanh",
            kernel_initializer=truncated_normal(initializer_range), name="dense")

    def build(self, input_shape):
        build_sublayer(self.dense, (None, self.hidden_size))
        super().build(input_shape)

    def call(self, sequence):
        return self.dense(sequence[:, 0, :])

    def get_config(self):
        config = super().get_config()
        config.update(hidden_size=self.hidden_size, initializer_range=self.initializer_range)
        return config
