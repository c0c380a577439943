"""Parity with a second implementation: the Model Garden AlbertEncoder (tf-models-official).

Weights are copied from the Model Garden encoder into ours, reshaped where its EinsumDense
layout ([H, heads, head_size]) differs from our dense [H, H] layout; both encoders must then
give the same outputs, padding in the batch included.
"""

import numpy as np
from official.nlp.modeling import networks as garden_networks

from albert_tf.models.encoder import AlbertEncoder
from helpers import random_inputs, randomize_weights


def _copy_garden_weights_into(ours, garden):
    garden_weights = {w.name.split(":")[0]: w.numpy() for w in garden.weights}
    block = "transformer/self_attention"
    hidden = ours.config.hidden_size
    names = {  # ours -> Model Garden
        "embedding/word_embeddings": "word_embeddings/embeddings",
        "embedding/position_embeddings": "position_embedding/embeddings",
        "embedding/token_type_embeddings": "type_embeddings/embeddings",
        "embedding/layer_norm/gamma": "embeddings/layer_norm/gamma",
        "embedding/layer_norm/beta": "embeddings/layer_norm/beta",
        "embedding/projection/kernel": "embedding_projection/kernel",
        "embedding/projection/bias": "embedding_projection/bias",
        "pooler/dense/kernel": "pooler_transform/kernel",
        "pooler/dense/bias": "pooler_transform/bias",
    }
    ours_block = "transformer/group_0_inner_0_attention"
    for part in ("query", "key", "value"):
        for kind in ("kernel", "bias"):
            names[f"{ours_block}/{part}/{kind}"] = f"{block}/{part}/{kind}"
    names[f"{ours_block}/output/kernel"] = f"{block}/attention_output/kernel"
    names[f"{ours_block}/output/bias"] = f"{block}/attention_output/bias"
    for kind in ("gamma", "beta"):
        names[f"{ours_block}/layer_norm/{kind}"] = f"transformer/self_attention_layer_norm/{kind}"
        names[f"transformer/group_0_inner_0_ffn/layer_norm/{kind}"] = (
            f"transformer/output_layer_norm/{kind}")
    for kind in ("kernel", "bias"):
        names[f"transformer/group_0_inner_0_ffn/intermediate/{kind}"] = (
            f"transformer/intermediate/{kind}")
        names[f"transformer/group_0_inner_0_ffn/output/{kind}"] = f"transformer/output/{kind}"

    assert len(names) == len(ours.weights) == len(garden.weights)
    for weight in ours.weights:
        value = garden_weights[names[weight.name.split(":")[0]]]
        if value.shape != tuple(weight.shape):  # [H, heads, size] / [heads, size, H] -> [H, H]
            value = value.reshape(-1, hidden) if "output" in weight.name else value.reshape(
                weight.shape)
        weight.assign(value)


def test_same_outputs_as_model_garden_albert_encoder(tiny_config):
    config = tiny_config
    garden = garden_networks.AlbertEncoder(
        vocab_size=config.vocab_size, embedding_width=config.embedding_size,
        hidden_size=config.hidden_size, num_layers=config.num_layers,
        num_attention_heads=config.num_attention_heads,
        max_sequence_length=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size, intermediate_size=config.intermediate_size,
        dropout_rate=0.0, attention_dropout_rate=0.0, dict_outputs=True)
    ours = AlbertEncoder(config)
    inputs = random_inputs([9, 6, 2], seq_length=9, vocab_size=config.vocab_size, seed=11,
                           type_split=5)
    garden(inputs)
    ours(inputs)
    randomize_weights(garden, seed=12)
    _copy_garden_weights_into(ours, garden)

    expected, actual = garden(inputs), ours(inputs)
    # Model Garden masks padded keys with -1e9, we (as the original code) with -10000; both
    # give them exactly zero weight in float32, so every position must agree.
    np.testing.assert_allclose(actual["sequence_output"], expected["sequence_output"],
                               atol=1e-5)
    np.testing.assert_allclose(actual["pooled_output"], expected["pooled_output"], atol=1e-5)
