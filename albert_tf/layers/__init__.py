"""Keras layers of ALBERT; they know nothing about files or command lines."""

from albert_tf.layers.activations import gelu_exact, gelu_tanh, get_activation
from albert_tf.layers.attention import AttentionBlock, attention_bias_from_mask
from albert_tf.layers.embedding import FactorizedEmbedding
from albert_tf.layers.feed_forward import FeedForwardBlock
from albert_tf.layers.pooler import Pooler, masked_mean, sentence_vector
from albert_tf.layers.shared_encoder import SharedTransformerEncoder, group_of_layer

__all__ = ["AttentionBlock", "FactorizedEmbedding", "FeedForwardBlock", "Pooler",
           "SharedTransformerEncoder", "attention_bias_from_mask", "gelu_exact", "gelu_tanh",
           "get_activation", "group_of_layer", "masked_mean", "sentence_vector"]
