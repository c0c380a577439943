"""Pretraining heads: the masked-LM head tied to the word embeddings, and the sentence head.

Both follow the original ALBERT code: the MLM head gathers the masked
positions, transforms them H -> E with the hidden activation and a LayerNorm, and scores them
against the transposed V x E word-embedding table plus an output bias of V; the sentence head
is a 2-way dense layer on the pooled output (SOP: 1 = swapped, NSP: 1 = random next). Logits
come out in float32 under any mixed-precision policy, so the softmax and losses are float32.
"""

from __future__ import annotations

import tensorflow as tf
import tf_keras

from albert_tf.layers.activations import get_activation
from albert_tf.layers.common import build_sublayer, float32_layer_norm, truncated_normal
from albert_tf.layers.task_heads import ClassificationHead


def gather_positions(sequence: tf.Tensor, positions: tf.Tensor) -> tf.Tensor:
    """`(batch_size, seq_length, width)` at `(batch_size, num_positions)` ->
    `(batch_size, num_positions, width)`."""
    return tf.gather(sequence, positions, batch_dims=1)


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class MaskedLMHead(tf_keras.layers.Layer):
    """Scores every vocabulary piece at the masked positions, with output weights tied to the
    word embeddings.

    Args:
        vocab_size: int, V (length of the output bias).
        embedding_size: int, E (width of the transform).
        hidden_activation: str, an `AlbertConfig.hidden_activation` name.
        initializer_range: float, stddev of the truncated-normal initializer.
        layer_norm_epsilon: float.

    Call arguments:
        sequence: `(batch_size, seq_length, hidden_size)`, the encoder's sequence output.
        positions: int `(batch_size, num_predictions)`, the masked positions.
        embedding_table: the `(vocab_size, embedding_size)` word-embedding table.

    Returns:
        float32 logits `(batch_size, num_predictions, vocab_size)`.
    """

    def __init__(self, vocab_size: int, embedding_size: int,
                 hidden_activation: str = "gelu_tanh", initializer_range: float = 0.02,
                 layer_norm_epsilon: float = 1e-12, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.embedding_size = embedding_size
        self.hidden_activation = hidden_activation
        self.initializer_range = initializer_range
        self.layer_norm_epsilon = layer_norm_epsilon
        self.transform = tf_keras.layers.Dense(
            embedding_size, activation=get_activation(hidden_activation),
            kernel_initializer=truncated_normal(initializer_range), name="transform")
        self.layer_norm = float32_layer_norm(layer_norm_epsilon, "layer_norm")

    def build(self, input_shape):
        hidden_size = input_shape[-1]
        build_sublayer(self.transform, (None, None, hidden_size))
        build_sublayer(self.layer_norm, (None, None, self.embedding_size))
        self.output_bias = self.add_weight("output_bias", shape=(self.vocab_size,),
                                           initializer="zeros")
        super().build(input_shape)

    def call(self, sequence, positions, embedding_table):
        transformed = self.layer_norm(self.transform(gather_positions(sequence, positions)))
        table = tf.cast(embedding_table, transformed.dtype)
        logits = tf.einsum("bpe,ve->bpv", transformed, table)
        return tf.cast(logits, tf.float32) + tf.cast(self.output_bias, tf.float32)

    def get_config(self):
        config = super().get_config()
        config.update(vocab_size=self.vocab_size, embedding_size=self.embedding_size,
                      hidden_activation=self.hidden_activation,
                      initializer_range=self.initializer_range,
                      layer_norm_epsilon=self.layer_norm_epsilon)
        return config


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class SentenceHead(ClassificationHead):
    """Two-way classifier on the pooled output (SOP or NSP): a `ClassificationHead` of 2
    outputs without dropout, as in the original pretraining.

    Args:
        initializer_range: float, stddev of the truncated-normal initializer.

    Call arguments:
        pooled: `(batch_size, hidden_size)`.

    Returns:
        float32 logits `(batch_size, 2)`.
    """

    def __init__(self, initializer_range: float = 0.02, **kwargs):
        super().__init__(2, 0.0, initializer_range, **kwargs)

    def get_config(self):
        config = super().get_config()
        del config["num_outputs"], config["dropout_rate"]
        return config
