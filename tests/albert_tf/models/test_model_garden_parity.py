"""Parity with a second implementation: the Model Garden AlbertEncoder (tf-models-official).

Model Garden weights reach our encoder through the converter (`checkpoints.model_garden`),
which reshapes its EinsumDense attention kernels ([H, heads, head_size]) to our dense [H, H];
both encoders must then give the same outputs, padding in the batch included.
"""

import numpy as np
import pytest
import tensorflow as tf
from helpers import random_inputs, randomize_weights

from albert_tf.checkpoints import CheckpointError
from albert_tf.checkpoints.model_garden import (
    garden_arrays,
    model_garden_encoder,
    read_model_garden,
)
from albert_tf.checkpoints.original import assign_original_arrays
from albert_tf.models.encoder import AlbertEncoder


@pytest.fixture(scope="module")
def garden_and_inputs(tiny_config):
    garden = model_garden_encoder(tiny_config)
    inputs = random_inputs([9, 6, 2], seq_length=9, vocab_size=tiny_config.vocab_size, seed=11,
                           type_split=5)
    garden(inputs)
    randomize_weights(garden, seed=12)
    return garden, inputs


def _assert_same_outputs(ours, garden, inputs):
    expected, actual = garden(inputs), ours(inputs)
    # Model Garden masks padded keys with -1e9, we (as the original code) with -10000; both
    # give them exactly zero weight in float32, so every position must agree.
    np.testing.assert_allclose(actual["sequence_output"], expected["sequence_output"],
                               atol=1e-5)
    np.testing.assert_allclose(actual["pooled_output"], expected["pooled_output"], atol=1e-5)


def test_same_outputs_as_model_garden_albert_encoder(tiny_config, garden_and_inputs):
    garden, inputs = garden_and_inputs
    ours = AlbertEncoder(tiny_config)
    ours(inputs)
    assign_original_arrays(ours, garden_arrays(garden), "Model Garden encoder")
    _assert_same_outputs(ours, garden, inputs)


@pytest.mark.parametrize("root", ["encoder", "pretrainer"])
def test_model_garden_checkpoint_converts_to_ours(tiny_config, garden_and_inputs, tmp_path, root):
    """A TF2 object checkpoint of the encoder, saved alone or inside a pretrainer-style
    object (as the Model Garden's BertPretrainerV2 checkpoints hold it)."""
    garden, inputs = garden_and_inputs
    if root == "encoder":
        saved = tf.train.Checkpoint(encoder=garden)
    else:
        saved = tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=garden),
                                    step=tf.Variable(7))
    prefix = saved.write(str(tmp_path / "ckpt"))
    arrays, _ = read_model_garden(prefix, tiny_config)
    ours = AlbertEncoder(tiny_config)
    ours(inputs)
    assign_original_arrays(ours, arrays, prefix)
    _assert_same_outputs(ours, garden, inputs)


def test_model_garden_checkpoint_of_another_size_is_reported(tiny_config, garden_and_inputs,
                                                             tmp_path):
    garden, _ = garden_and_inputs
    prefix = tf.train.Checkpoint(encoder=garden).write(str(tmp_path / "ckpt"))
    with pytest.raises(CheckpointError) as error:
        read_model_garden(prefix, tiny_config.replace(intermediate_size=48))
    message = str(error.value)
    assert "wrong shape (3)" in message
    assert "transformer/intermediate/kernel (encoder/" in message
    assert "checkpoint [32, 64], model [32, 48]" in message
    with pytest.raises(CheckpointError, match="num_groups 1"):
        model_garden_encoder(tiny_config.replace(num_groups=2))
