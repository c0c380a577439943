"""Cross-layer sharing really shares: object identity, group assignment, gradient flow."""

import pytest
import tensorflow as tf
from helpers import random_inputs
from seeding import seed_draws
from thresholds import above

from albert_tf.layers import SharedTransformerEncoder, group_of_layer
from albert_tf.models.encoder import AlbertEncoder


def _stack(sharing, num_layers=3, num_groups=1, inner_group_num=1):
    return SharedTransformerEncoder(num_layers=num_layers, hidden_size=16,
                                    num_attention_heads=2, intermediate_size=32,
                                    sharing=sharing, num_groups=num_groups,
                                    inner_group_num=inner_group_num)


@pytest.mark.parametrize("sharing, attention_shared, ffn_shared", [
    ("all", True, True), ("attention", True, False), ("ffn", False, True),
    ("none", False, False)])
def test_which_sub_blocks_are_shared(sharing, attention_shared, ffn_shared):
    stack = _stack(sharing, num_layers=4)
    attention = [stack.blocks_of_layer(i)[0][0] for i in range(4)]
    feed_forward = [stack.blocks_of_layer(i)[0][1] for i in range(4)]
    for blocks, shared in ((attention, attention_shared), (feed_forward, ffn_shared)):
        distinct = len({id(block) for block in blocks})
        assert distinct == (1 if shared else 4)
    assert len(stack.attention_blocks) == (1 if attention_shared else 4)
    assert len(stack.feed_forward_blocks) == (1 if ffn_shared else 4)


@pytest.mark.parametrize("num_layers, num_groups", [(3, 2), (12, 1), (12, 4), (7, 3), (5, 5)])
def test_group_of_layer_is_int_i_times_n_over_l(num_layers, num_groups):
    for layer in range(num_layers):
        assert group_of_layer(layer, num_layers, num_groups) == int(
            layer * num_groups / num_layers)


def test_three_layers_in_two_groups_use_groups_0_0_1():
    stack = _stack("all", num_layers=3, num_groups=2)
    first = [stack.blocks_of_layer(i)[0] for i in range(3)]
    assert first[0][0] is first[1][0] and first[0][1] is first[1][1]
    assert first[2][0] is not first[0][0] and first[2][1] is not first[0][1]
    assert [block.name for block, _ in first] == [
        "group_0_inner_0_attention", "group_0_inner_0_attention", "group_1_inner_0_attention"]


def test_shared_attention_in_groups_keeps_ffn_per_layer():
    stack = _stack("attention", num_layers=4, num_groups=2)
    attention = [stack.blocks_of_layer(i)[0][0].name for i in range(4)]
    assert attention == ["group_0_inner_0_attention"] * 2 + ["group_1_inner_0_attention"] * 2
    assert len(stack.feed_forward_blocks) == 4


def test_inner_groups_apply_distinct_blocks_in_sequence():
    stack = _stack("all", num_layers=3, inner_group_num=2)
    stack.return_all_layer_outputs = True
    blocks = stack.blocks_of_layer(0)
    assert len(blocks) == 2 and blocks[0][0] is not blocks[1][0]
    assert all(stack.blocks_of_layer(i) == blocks for i in range(3))
    outputs = stack(tf.random.normal((2, 5, 16), seed=1), input_mask=tf.ones((2, 5), tf.int32))
    assert len(outputs) == 6


@pytest.mark.parametrize("sharing, num_groups, inner_group_num", [
    ("all", 1, 1), ("attention", 1, 1), ("ffn", 2, 1), ("none", 1, 1), ("all", 2, 2)])
def test_gradients_reach_every_distinct_weight(tiny_config, sharing, num_groups,
                                               inner_group_num, seed, record_property):
    config = tiny_config.replace(sharing=sharing, num_groups=num_groups,
                                 inner_group_num=inner_group_num, num_layers=3)
    seed_draws(seed)  # the initial weights
    encoder = AlbertEncoder(config)
    inputs = random_inputs([6, 4], seq_length=6, vocab_size=config.vocab_size, seed=seed,
                           type_split=3)
    with tf.GradientTape() as tape:
        outputs = encoder(inputs, training=True)
        # A non-symmetric function of the outputs: a plain sum has zero gradient through
        # the final LayerNorm's normalized part.
        loss = (tf.reduce_sum(tf.square(outputs["sequence_output"][:, :, :3]))
                + tf.reduce_sum(tf.square(outputs["pooled_output"][:, :3])))
    variables = encoder.trainable_variables
    assert len({id(v) for v in variables}) == len(variables)
    largest = {}
    for variable, gradient in zip(variables, tape.gradient(loss, variables)):
        assert gradient is not None, variable.name
        largest[variable.name] = float(tf.reduce_max(tf.abs(tf.convert_to_tensor(gradient))))
    # The attention's key bias adds q.b to all of a query's scores, which the softmax
    # ignores: its gradient is zero but for rounding, so it is not counted.
    reached = [value for name, value in largest.items() if "key/bias" not in name]
    assert len(reached) < len(largest)  # the key bias was there to leave out
    above(record_property, f"{sharing}, {num_groups} x {inner_group_num} groups: the weakest "
          "weight's largest |gradient|", min(reached), 0)
