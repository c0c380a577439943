"""The self-attention sub-block of a post-LayerNorm transformer layer (BERT/ALBERT)."""

from __future__ import annotations

import math

import tensorflow as tf
import tf_keras

from albert_tf.layers.common import build_sublayer, dropout, float32_layer_norm, truncated_normal

# Added to the attention scores of padding keys, as in the original code.
MASKED_SCORE = -10000.0


def attention_bias_from_mask(input_mask: tf.Tensor) -> tf.Tensor:
    """`(batch_size, seq_length)` 1/0 mask -> `(batch_size, 1, 1, seq_length)` additive bias."""
    # A reshape, not `[:, None, None, :]`: LiteRT has no kernel for a strided slice that adds
    # two axes (the converter asks for TensorFlow's own op, which LiteRT runtimes lack).
    keep = tf.cast(input_mask, tf.float32)
    return tf.reshape(1.0 - keep, [tf.shape(keep)[0], 1, 1, tf.shape(keep)[1]]) * MASKED_SCORE


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class AttentionBlock(tf_keras.layers.Layer):
    """Multi-head self-attention, output projection, dropout, residual and LayerNorm.

    LayerNorm(x + Dropout(Dense(MultiHead(x)))), with scores scaled by 1/sqrt(head_size),
    softmax in float32 and dropout on the probabilities.

    Args:
        hidden_size: int, H.
        num_attention_heads: int, must divide `hidden_size`.
        attention_dropout: float, dropout on the attention probabilities.
        hidden_dropout: float, dropout on the projected output.
        initializer_range: float, stddev of the truncated-normal initializer.
        layer_norm_epsilon: float.

    Call arguments:
        hidden: `(batch_size, seq_length, hidden_size)`.
        attention_bias: float32 `(batch_size, 1, 1, seq_length)`, 0 for keys to attend to and
            a large negative value for padding (`attention_bias_from_mask`).

    Returns:
        `(batch_size, seq_length, hidden_size)`, float32 (the LayerNorm's output).
    """

    def __init__(self, hidden_size: int, num_attention_heads: int,
                 attention_dropout: float = 0.0, hidden_dropout: float = 0.0,
                 initializer_range: float = 0.02, layer_norm_epsilon: float = 1e-12, **kwargs):
        super().__init__(**kwargs)
        if hidden_size % num_attention_heads:
            raise ValueError(f"hidden_size {hidden_size} is not divisible by "
                             f"num_attention_heads {num_attention_heads}")
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.head_size = hidden_size // num_attention_heads
        self.attention_dropout = attention_dropout
        self.hidden_dropout = hidden_dropout
        self.initializer_range = initializer_range
        self.layer_norm_epsilon = layer_norm_epsilon

        def dense(name):
            return tf_keras.layers.Dense(
                hidden_size, kernel_initializer=truncated_normal(initializer_range), name=name)

        self.query = dense("query")
        self.key = dense("key")
        self.value = dense("value")
        self.output_dense = dense("output")
        self.probability_dropout = dropout(attention_dropout)
        self.output_dropout = dropout(hidden_dropout)
        self.layer_norm = float32_layer_norm(layer_norm_epsilon, "layer_norm")

    def build(self, input_shape):
        hidden_shape = tf.TensorShape([None, None, self.hidden_size])
        for layer in (self.query, self.key, self.value, self.output_dense):
            build_sublayer(layer, hidden_shape)
        build_sublayer(self.layer_norm, hidden_shape)
        super().build(input_shape)

    def _split_heads(self, x, batch_size, seq_length, permutation):
        """`(batch_size, seq_length, hidden_size)` to per-head slices in `permutation` order
        of (batch, seq, head, head_size)."""
        heads = tf.reshape(x, [batch_size, seq_length, self.num_attention_heads, self.head_size])
        return tf.transpose(heads, permutation)

    def call(self, hidden, attention_bias, training=None):
        batch_size, seq_length = tf.shape(hidden)[0], tf.shape(hidden)[1]
        scale = tf.cast(1.0 / math.sqrt(self.head_size), self.compute_dtype)
        # Heads go in front as batch dimensions of plain matmuls, keys already transposed:
        # (b, n, q, d) x (b, n, d, k). Fewer copies than einsum's layouts; about 15% faster
        # fwd + bwd at albert_base shapes, with and without XLA (docs/performance.md).
        query = self._split_heads(self.query(hidden) * scale, batch_size, seq_length,
                                  [0, 2, 1, 3])
        key = self._split_heads(self.key(hidden), batch_size, seq_length, [0, 2, 3, 1])
        value = self._split_heads(self.value(hidden), batch_size, seq_length, [0, 2, 1, 3])

        scores = tf.matmul(query, key)  # (batch, heads, queries, keys)
        scores = tf.cast(scores, tf.float32) + attention_bias
        probabilities = tf.cast(tf.nn.softmax(scores, axis=-1), self.compute_dtype)
        probabilities = self.probability_dropout(probabilities, training=training)

        context = tf.transpose(tf.matmul(probabilities, value), [0, 2, 1, 3])
        context = tf.reshape(context, [batch_size, seq_length, self.hidden_size])
        attended = self.output_dropout(self.output_dense(context), training=training)
        return self.layer_norm(hidden + attended)

    def get_config(self):
        config = super().get_config()
        config.update(hidden_size=self.hidden_size,
                      num_attention_heads=self.num_attention_heads,
                      attention_dropout=self.attention_dropout,
                      hidden_dropout=self.hidden_dropout,
                      initializer_range=self.initializer_range,
                      layer_norm_epsilon=self.layer_norm_epsilon)
        return config
