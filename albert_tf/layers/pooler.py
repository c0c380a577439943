"""The pooler: the first ([CLS]) position's hidden vector through dense + tanh."""

from __future__ import annotations

import tf_keras

from albert_tf.layers.common import build_sublayer, truncated_normal


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
