"""The feed-forward sub-block of a post-LayerNorm transformer layer (BERT/ALBERT)."""

from __future__ import annotations

import tensorflow as tf
import tf_keras

from albert_tf.layers.activations import get_activation
from albert_tf.layers.common import build_sublayer, dropout, float32_layer_norm, truncated_normal


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class FeedForwardBlock(tf_keras.layers.Layer):
    """LayerNorm(x + Dropout(Dense_H(activation(Dense_I(x))))).

    Args:
        hidden_size: int, H.
        intermediate_size: int, the inner width (4H in the paper).
        hidden_activation: str, a name `albert_tf.layers.activations.get_activation` knows.
        hidden_dropout: float, dropout on the output before the residual.
        initializer_range: float, stddev of the truncated-normal initializer.
        layer_norm_epsilon: float.

    Call arguments:
        hidden: `(batch_size, seq_length, hidden_size)`.

    Returns:
        `(batch_size, seq_length, hidden_size)`, float32 (the LayerNorm's output).
    """

    def __init__(self, hidden_size: int, intermediate_size: int,
                 hidden_activation: str = "gelu_tanh", hidden_dropout: float = 0.0,
                 initializer_range: float = 0.02, layer_norm_epsilon: float = 1e-12, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.hidden_activation = hidden_activation
        self.hidden_dropout = hidden_dropout
        self.initializer_range = initializer_range
        self.layer_norm_epsilon = layer_norm_epsilon
        self.intermediate = tf_keras.layers.Dense(
            intermediate_size, activation=get_activation(hidden_activation),
            kernel_initializer=truncated_normal(initializer_range), name="intermediate")
        self.output_dense = tf_keras.layers.Dense(
            hidden_size, kernel_initializer=truncated_normal(initializer_range), name="output")
        self.output_dropout = dropout(hidden_dropout)
        self.layer_norm = float32_layer_norm(layer_norm_epsilon, "layer_norm")

    def build(self, input_shape):
        hidden_shape = tf.TensorShape([None, None, self.hidden_size])
        build_sublayer(self.intermediate, hidden_shape)
        build_sublayer(self.output_dense, tf.TensorShape([None, None, self.intermediate_size]))
        build_sublayer(self.layer_norm, hidden_shape)
        super().build(input_shape)

    def call(self, hidden, training=None):
        transformed = self.output_dense(self.intermediate(hidden))
        transformed = self.output_dropout(transformed, training=training)
        return self.layer_norm(hidden + transformed)

    def get_config(self):
        config = super().get_config()
        config.update(hidden_size=self.hidden_size, intermediate_size=self.intermediate_size,
                      hidden_activation=self.hidden_activation,
                      hidden_dropout=self.hidden_dropout,
                      initializer_range=self.initializer_range,
                      layer_norm_epsilon=self.layer_norm_epsilon)
        return config
