"""AlbertEncoder: factorized embedding -> shared transformer stack -> pooler, as a Keras model."""

from __future__ import annotations

from typing import Any, Mapping

import tensorflow as tf
import tf_keras

from albert_tf.config import AlbertConfig
from albert_tf.layers.embedding import FactorizedEmbedding
from albert_tf.layers.pooler import Pooler
from albert_tf.layers.shared_encoder import SharedTransformerEncoder

INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def random_encoder_inputs(config: AlbertConfig, batch_size: int,
                          seq_length: int) -> dict[str, tf.Tensor]:
    """A full-length, single-segment batch of random ordinary ids (above the 5 control ids),
    for smoke runs and benchmarks."""
    word_ids = tf.random.uniform((batch_size, seq_length), 5, config.vocab_size, tf.int32)
    return {"input_word_ids": word_ids, "input_mask": tf.ones_like(word_ids),
            "input_type_ids": tf.zeros_like(word_ids)}


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class AlbertEncoder(tf_keras.Model):
    """The ALBERT encoder (a functional tf_keras model).

    Args:
        config: an `AlbertConfig` (or a mapping of its fields).
        return_all_layer_outputs: bool; also output `encoder_outputs`, the list of every
            transformer block's output (`num_layers * inner_group_num` entries).

    Inputs, int32 (or int64) `(batch_size, seq_length)` each, as a dict by name or a list in
    this order: input_word_ids, input_mask (1 = token, 0 = padding), input_type_ids.

    Outputs (a dict):
        sequence_output: `(batch_size, seq_length, hidden_size)`.
        pooled_output: `(batch_size, hidden_size)`, dense + tanh on the first token.
        encoder_outputs: list of `(batch_size, seq_length, hidden_size)`, on request.

    Example:
    >>> encoder = AlbertEncoder(AlbertConfig(vocab_size=100, embedding_size=8, hidden_size=16,
    ...     num_layers=2, num_attention_heads=2, intermediate_size=32))
    >>> ids = tf.ones((2, 5), tf.int32)
    >>> encoder({"input_word_ids": ids, "input_mask": ids,
    ...          "input_type_ids": tf.zeros_like(ids)})["pooled_output"].shape
    TensorShape([2, 16])
    """

    def __init__(self, config: AlbertConfig | Mapping[str, Any],
                 return_all_layer_outputs: bool = False, **kwargs):
        if not isinstance(config, AlbertConfig):
            config = AlbertConfig.from_dict(config)
        # A list in the Model Garden's order, so positional [ids, mask, types] works as
        # there; a dict is matched to these inputs by name.
        input_list = [tf_keras.Input(shape=(None,), dtype=tf.int32, name=name)
                      for name in INPUT_NAMES]
        inputs = dict(zip(INPUT_NAMES, input_list))
        embedding = FactorizedEmbedding(
            vocab_size=config.vocab_size, embedding_size=config.embedding_size,
            hidden_size=config.hidden_size,
            max_position_embeddings=config.max_position_embeddings,
            type_vocab_size=config.type_vocab_size, initializer_range=config.initializer_range,
            layer_norm_epsilon=config.layer_norm_epsilon, dropout_rate=config.hidden_dropout,
            name="embedding")
        transformer = SharedTransformerEncoder(
            num_layers=config.num_layers, hidden_size=config.hidden_size,
            num_attention_heads=config.num_attention_heads,
            intermediate_size=config.intermediate_size,
            hidden_activation=config.hidden_activation, hidden_dropout=config.hidden_dropout,
            attention_dropout=config.attention_dropout,
            initializer_range=config.initializer_range,
            layer_norm_epsilon=config.layer_norm_epsilon, sharing=config.sharing,
            num_groups=config.num_groups, inner_group_num=config.inner_group_num,
            return_all_layer_outputs=True, name="transformer")
        pooler = Pooler(config.hidden_size, config.initializer_range, name="pooler")

        embedded = embedding([inputs["input_word_ids"], inputs["input_type_ids"]])
        layer_outputs = transformer(embedded, input_mask=inputs["input_mask"])
        outputs = {"sequence_output": layer_outputs[-1],
                   "pooled_output": pooler(layer_outputs[-1])}
        if return_all_layer_outputs:
            outputs["encoder_outputs"] = layer_outputs
        kwargs.setdefault("name", "albert_encoder")
        super().__init__(inputs=input_list, outputs=outputs, **kwargs)

        self.config = config
        self.return_all_layer_outputs = return_all_layer_outputs
        self.embedding = embedding
        self.transformer = transformer
        self.pooler = pooler

    def get_embedding_table(self) -> tf.Variable:
        """The V x E word-embedding table (the MLM head ties its output to it)."""
        return self.embedding.word_embeddings

    def get_config(self):
        return {"config": self.config.to_dict(),
                "return_all_layer_outputs": self.return_all_layer_outputs,
                "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)
