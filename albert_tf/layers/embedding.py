"""The factorized embedding of ALBERT (paper section 3.1, "factorized embedding parameterization").

Word, position and token-type embeddings all live at width E; their sum is layer-normalized and
dropped out at width E and then projected to the hidden width H. The projection exists only when
E != H, so with E == H this is exactly BERT's embedding (O(V x H) parameters instead of
O(V x E + E x H)).
"""

from __future__ import annotations

import tensorflow as tf
import tf_keras

from albert_tf.layers.common import build_sublayer, dropout, float32_layer_norm, truncated_normal


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class FactorizedEmbedding(tf_keras.layers.Layer):
    """Token ids and type ids -> hidden vectors through a V x E table and an E -> H projection.

    Args:
        vocab_size: int, V.
        embedding_size: int, E.
        hidden_size: int, H; the projection E -> H is created only when it differs from E.
        max_position_embeddings: int, rows of the position table (longest sequence).
        type_vocab_size: int, rows of the token-type table.
        initializer_range: float, stddev of the truncated-normal initializer.
        layer_norm_epsilon: float.
        dropout_rate: float, dropout on the normalized E-wide sum.

    Call arguments:
        inputs: a pair `(word_ids, type_ids)`, int tensors of shape `(batch_size, seq_length)`.

    Returns:
        `(batch_size, seq_length, hidden_size)`.

    Example:
    >>> layer = FactorizedEmbedding(vocab_size=100, embedding_size=8, hidden_size=16)
    >>> layer([tf.zeros((2, 5), tf.int32), tf.zeros((2, 5), tf.int32)]).shape
    TensorShape([2, 5, 16])
    """

    def __init__(self, vocab_size: int, embedding_size: int, hidden_size: int,
                 max_position_embeddings: int = 512, type_vocab_size: int = 2,
                 initializer_range: float = 0.02, layer_norm_epsilon: float = 1e-12,
                 dropout_rate: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.embedding_size = embedding_size
        self.hidden_size = hidden_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.initializer_range = initializer_range
        self.layer_norm_epsilon = layer_norm_epsilon
        self.dropout_rate = dropout_rate
        self.layer_norm = float32_layer_norm(layer_norm_epsilon, "layer_norm")
        self.dropout = dropout(dropout_rate)
        self.projection = None
        if embedding_size != hidden_size:
            self.projection = tf_keras.layers.Dense(
                hidden_size, kernel_initializer=truncated_normal(initializer_range),
                name="projection")

    def build(self, input_shape):
        def table(name, rows):
            return self.add_weight(name, shape=(rows, self.embedding_size),
                                   initializer=truncated_normal(self.initializer_range))

        self.word_embeddings = table("word_embeddings", self.vocab_size)
        self.position_embeddings = table("position_embeddings", self.max_position_embeddings)
        self.token_type_embeddings = table("token_type_embeddings", self.type_vocab_size)
        embedded_shape = tf.TensorShape([None, None, self.embedding_size])
        build_sublayer(self.layer_norm, embedded_shape)
        if self.projection is not None:
            build_sublayer(self.projection, embedded_shape)
        super().build(input_shape)

    def call(self, inputs, training=None):
        word_ids, type_ids = inputs
        static_length = word_ids.shape[1]
        if static_length is not None and static_length > self.max_position_embeddings:
            raise ValueError(f"sequence length {static_length} exceeds "
                             f"max_position_embeddings {self.max_position_embeddings}")
        seq_length = tf.shape(word_ids)[1]
        # The few token types are looked up as a one-hot matmul: its gradient is a dense
        # (type_vocab_size, E) tensor. A gather's gradient would be IndexedSlices with one row
        # per token, which the optimizer de-duplicates with a sort of all batch x seq ids.
        type_one_hot = tf.one_hot(type_ids, self.type_vocab_size,
                                  dtype=self.token_type_embeddings.dtype)
        embedded = (tf.gather(self.word_embeddings, word_ids)
                    + tf.matmul(type_one_hot, self.token_type_embeddings)
                    + self.position_embeddings[tf.newaxis, :seq_length])
        embedded = self.dropout(self.layer_norm(embedded), training=training)
        if self.projection is not None:
            embedded = self.projection(embedded)
        return tf.cast(embedded, self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(vocab_size=self.vocab_size, embedding_size=self.embedding_size,
                      hidden_size=self.hidden_size,
                      max_position_embeddings=self.max_position_embeddings,
                      type_vocab_size=self.type_vocab_size,
                      initializer_range=self.initializer_range,
                      layer_norm_epsilon=self.layer_norm_epsilon,
                      dropout_rate=self.dropout_rate)
        return config
