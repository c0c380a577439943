"""Fine-tuning heads: a dense layer on the pooled output (classification, regression, one
score per multiple-choice option) and start/end logits on the sequence output (SQuAD spans).

Both follow the original ALBERT fine-tuning code (see `reference.md`): dropout 0.1 on the
pooled output and a `num_outputs x H` dense layer; SQuAD's span head is a `2 x H` dense layer
on every position. Logits come out in float32 under any mixed-precision policy, so softmax
and losses are float32.
"""

from __future__ import annotations

import tensorflow as tf
import tf_keras

from albert_tf.layers.common import build_sublayer, truncated_normal


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class ClassificationHead(tf_keras.layers.Layer):
    """Dropout and a dense layer on the pooled `[CLS]` representation.

    Args:
        num_outputs: int; classes for classification, 1 for regression (STS-B) and for the
            per-option score of multiple choice (RACE).
        dropout_rate: float, dropout on the pooled output while training (0.1 in the
            original).
        initializer_range: float, stddev of the truncated-normal initializer.

    Call arguments:
        pooled: `(batch_size, hidden_size)`.

    Returns:
        float32 `(batch_size, num_outputs)`.

    Example:
    >>> head = ClassificationHead(3)
    >>> head(tf.zeros((2, 8))).shape
    TensorShape([2, 3])
    """

    def __init__(self, num_outputs: int, dropout_rate: float = 0.1,
                 initializer_range: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        if num_outputs < 1:
            raise ValueError(f"num_outputs must be at least 1, got {num_outputs}")
        self.num_outputs = num_outputs
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        self.dropout = tf_keras.layers.Dropout(dropout_rate)
        self.dense = tf_keras.layers.Dense(
            num_outputs, kernel_initializer=truncated_normal(initializer_range), name="dense")

    def build(self, input_shape):
        build_sublayer(self.dense, (None, input_shape[-1]))
        super().build(input_shape)

    def call(self, pooled, training=None):
        return tf.cast(self.dense(self.dropout(pooled, training=training)), tf.float32)

    def get_config(self):
        config = super().get_config()
        config.update(num_outputs=self.num_outputs, dropout_rate=self.dropout_rate,
                      initializer_range=self.initializer_range)
        return config


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class SpanHead(tf_keras.layers.Layer):
    """Start and end logits of an answer span at every position.

    Args:
        initializer_range: float, stddev of the truncated-normal initializer.

    Call arguments:
        sequence: `(batch_size, seq_length, hidden_size)`, the encoder's sequence output.

    Returns:
        (start_logits, end_logits), float32 `(batch_size, seq_length)` each.

    Example:
    >>> start, end = SpanHead()(tf.zeros((2, 5, 8)))
    >>> start.shape, end.shape
    (TensorShape([2, 5]), TensorShape([2, 5]))
    """

    def __init__(self, initializer_range: float = 0.02, **kwargs):
        super().__init__(**kwargs)
        self.initializer_range = initializer_range
        self.dense = tf_keras.layers.Dense(
            2, kernel_initializer=truncated_normal(initializer_range), name="dense")

    def build(self, input_shape):
        build_sublayer(self.dense, (None, None, input_shape[-1]))
        super().build(input_shape)

    def call(self, sequence):
        logits = tf.cast(self.dense(sequence), tf.float32)
        return logits[:, :, 0], logits[:, :, 1]

    def get_config(self):
        config = super().get_config()
        config.update(initializer_range=self.initializer_range)
        return config
