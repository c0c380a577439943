"""Each layer against hand-computed values or the numpy reference, and its config round trip."""

import math

import numpy as np
import numpy_reference as ref
import pytest
import tensorflow as tf
from helpers import randomize_weights, reference_block

from albert_tf.layers import (
    AttentionBlock,
    FactorizedEmbedding,
    FeedForwardBlock,
    Pooler,
    SharedTransformerEncoder,
    get_activation,
)


def test_gelu_tanh_hand_values():
    # 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))) at x = 1: 0.841192, x = -2: -0.045402
    values = get_activation("gelu_tanh")(tf.constant([0.0, 1.0, -2.0, 3.0])).numpy()
    np.testing.assert_allclose(values, [0.0, 0.8411920, -0.0454023, 2.9963627], atol=1e-6)


def test_gelu_exact_and_relu_hand_values():
    x = [1.0, -2.0]
    expected = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x]  # 0.841345, -0.045500
    np.testing.assert_allclose(get_activation("gelu_exact")(tf.constant(x)), expected, atol=1e-6)
    np.testing.assert_allclose(get_activation("relu")(tf.constant(x)), [1.0, 0.0])
    with pytest.raises(ValueError, match="unknown activation 'gelu'"):
        get_activation("gelu")


def test_factorized_embedding_matches_reference():
    layer = FactorizedEmbedding(vocab_size=50, embedding_size=8, hidden_size=12,
                                max_position_embeddings=10, type_vocab_size=2)
    word_ids = np.array([[3, 9, 41, 0], [7, 7, 2, 1]], np.int32)
    type_ids = np.array([[0, 0, 1, 1], [0, 1, 1, 1]], np.int32)
    layer([word_ids, type_ids])
    randomize_weights(layer, 1)
    x = (layer.word_embeddings.numpy()[word_ids] + layer.token_type_embeddings.numpy()[type_ids]
         + layer.position_embeddings.numpy()[:4][None])
    x = ref.layer_norm(x, *[w.numpy() for w in layer.layer_norm.weights])
    expected = x @ layer.projection.kernel.numpy() + layer.projection.bias.numpy()
    np.testing.assert_allclose(layer([word_ids, type_ids]), expected, atol=1e-5)


def test_sequences_longer_than_the_position_table_are_refused():
    layer = FactorizedEmbedding(vocab_size=50, embedding_size=8, hidden_size=8,
                                max_position_embeddings=6)
    with pytest.raises(ValueError, match="sequence length 7 exceeds max_position_embeddings 6"):
        layer([tf.zeros((1, 7), tf.int32), tf.zeros((1, 7), tf.int32)])


def test_embedding_has_no_projection_when_e_equals_h():
    layer = FactorizedEmbedding(vocab_size=50, embedding_size=12, hidden_size=12)
    out = layer([tf.zeros((1, 3), tf.int32), tf.zeros((1, 3), tf.int32)])
    assert layer.projection is None and out.shape == (1, 3, 12)
    assert layer.count_params() == (50 + 512 + 2) * 12 + 2 * 12


def test_attention_and_feed_forward_match_reference():
    attention = AttentionBlock(hidden_size=16, num_attention_heads=4)
    feed_forward = FeedForwardBlock(hidden_size=16, intermediate_size=40)
    hidden = np.random.default_rng(0).standard_normal((2, 5, 16)).astype(np.float32)
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], np.float32)
    bias = tf.constant((1.0 - mask)[:, None, None, :] * -10000.0)
    attention(hidden, attention_bias=bias)
    feed_forward(hidden)
    randomize_weights(attention, 2)
    randomize_weights(feed_forward, 3)
    block = reference_block(attention, feed_forward)
    attended = attention(hidden, attention_bias=bias)
    np.testing.assert_allclose(attended, ref.attention(hidden, mask, block, 4), atol=1e-5)
    np.testing.assert_allclose(feed_forward(attended), ref.feed_forward(attended.numpy(), block),
                               atol=1e-5)


def test_padding_keys_get_no_attention():
    attention = AttentionBlock(hidden_size=8, num_attention_heads=2)
    hidden = np.random.default_rng(1).standard_normal((1, 4, 8)).astype(np.float32)
    bias = tf.constant([[[[0.0, 0.0, -10000.0, -10000.0]]]])
    first = attention(hidden, attention_bias=bias)
    changed = hidden.copy()
    changed[:, 2:] = 100.0  # whatever sits at padded positions must not reach the others
    np.testing.assert_allclose(attention(changed, attention_bias=bias)[:, :2], first[:, :2],
                               atol=1e-6)


@pytest.mark.parametrize("layer", [
    FactorizedEmbedding(vocab_size=50, embedding_size=8, hidden_size=12, dropout_rate=0.1),
    AttentionBlock(hidden_size=16, num_attention_heads=4, attention_dropout=0.2),
    FeedForwardBlock(hidden_size=16, intermediate_size=40, hidden_activation="relu"),
    Pooler(hidden_size=16, initializer_range=0.05),
    SharedTransformerEncoder(num_layers=4, hidden_size=16, num_attention_heads=2,
                             intermediate_size=32, sharing="ffn", num_groups=2,
                             inner_group_num=2, return_all_layer_outputs=True),
], ids=lambda layer: type(layer).__name__)
def test_get_config_round_trip(layer):
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config


def test_masked_mean_averages_the_real_pieces_by_hand_and_keeps_the_dtype():
    from albert_tf.layers import masked_mean, sentence_vector
    sequence = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    mask = np.array([[1, 1, 0], [0, 0, 0]], np.int32)
    # Row 0: the mean of positions 0 and 1, (0..3 + 4..7) / 2; row 1 has no real piece.
    np.testing.assert_allclose(masked_mean(tf.constant(sequence), mask).numpy(),
                               [[2.0, 3.0, 4.0, 5.0], [0.0, 0.0, 0.0, 0.0]])
    # Summed in float32: 600 positions of 200.0 would overflow a float16 sum (65,504).
    halves = tf.fill([1, 600, 2], tf.constant(200.0, tf.float16))
    mean = masked_mean(halves, tf.ones([1, 600], tf.int32))
    assert mean.dtype == tf.float16
    np.testing.assert_allclose(mean.numpy(), [[200.0, 200.0]])
    encoded = {"pooled_output": tf.ones([2, 4]), "sequence_output": tf.constant(sequence)}
    assert sentence_vector(encoded, mask, "cls") is encoded["pooled_output"]
    with pytest.raises(ValueError, match="pooling must be one of cls, mean, got 'first'"):
        sentence_vector(encoded, mask, "first")
