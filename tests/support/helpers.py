"""Test helpers: random batches with padding and weights at a realistic scale."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

# The user-defined symbols of the released `30k-clean.model` (ids 5-12).
RELEASED_USER_SYMBOLS = ["(", ")", '"', "-", ".", "\u2013", "\u00a3", "\u20ac"]


def random_inputs(lengths, seq_length, vocab_size, seed=0, type_split=None):
    """A dict of encoder inputs; row i has lengths[i] real tokens, then padding (id 0).

    type_split: if given, tokens from that position on get type id 1 (a segment pair).
    """
    rng = np.random.default_rng(seed)
    batch = len(lengths)
    word_ids = rng.integers(5, vocab_size, size=(batch, seq_length)).astype(np.int32)
    mask = (np.arange(seq_length)[None, :] < np.asarray(lengths)[:, None]).astype(np.int32)
    type_ids = np.zeros_like(word_ids)
    if type_split is not None:
        type_ids[:, type_split:] = 1
    return {"input_word_ids": tf.constant(word_ids * mask),
            "input_mask": tf.constant(mask),
            "input_type_ids": tf.constant(type_ids * mask)}


def randomize_weights(model, seed=0):
    """Gives every weight values at a trained-model scale.

    The 0.02 init makes every layer nearly linear, so a wrong activation, a missing scale
    or a swapped LayerNorm would still match a reference to 1e-5; these values do not.
    LayerNorm gammas go around 1, betas and biases around 0.1, kernels ~ 1/sqrt(fan_in).
    """
    rng = np.random.default_rng(seed)
    for weight in model.trainable_weights:
        shape = weight.shape.as_list()
        name = weight.name
        if "gamma" in name:
            value = 1.0 + 0.2 * rng.standard_normal(shape)
        elif "beta" in name or "bias" in name:
            value = 0.1 * rng.standard_normal(shape)
        elif "embeddings" in name:
            value = 0.5 * rng.standard_normal(shape)
        else:
            value = rng.standard_normal(shape) / np.sqrt(shape[0])
        weight.assign(value.astype(np.float32))


def _dense(layer):
    return layer.kernel.numpy(), layer.bias.numpy()


def _norm(layer_norm):
    return layer_norm.gamma.numpy(), layer_norm.beta.numpy()


def reference_block(attention, feed_forward):
    """One (attention, feed-forward) pair's weights in numpy_reference's block layout."""
    return {"q": _dense(attention.query), "k": _dense(attention.key),
            "v": _dense(attention.value), "o": _dense(attention.output_dense),
            "ln1": _norm(attention.layer_norm), "ffn_in": _dense(feed_forward.intermediate),
            "ffn_out": _dense(feed_forward.output_dense), "ln2": _norm(feed_forward.layer_norm)}


def reference_weights(encoder):
    """An all-shared-layout encoder's weights for numpy_reference, blocks looked up by name."""
    emb = encoder.embedding
    config = encoder.config
    transformer = encoder.transformer
    by_name = {block.name: block for block in
               transformer.attention_blocks + transformer.feed_forward_blocks}
    groups = [[reference_block(by_name[f"group_{group}_inner_{inner}_attention"],
                               by_name[f"group_{group}_inner_{inner}_ffn"])
               for inner in range(config.inner_group_num)]
              for group in range(config.num_groups)]
    return {"embeddings": {"word": emb.word_embeddings.numpy(),
                           "position": emb.position_embeddings.numpy(),
                           "token_type": emb.token_type_embeddings.numpy(),
                           "ln_gamma": emb.layer_norm.gamma.numpy(),
                           "ln_beta": emb.layer_norm.beta.numpy()},
            "projection": _dense(emb.projection) if emb.projection else None,
            "groups": groups, "pooler": _dense(encoder.pooler.dense)}


def pretraining_batch(vocab_size, seed=0, batch=6, seq=16, predictions=5):
    """Padded sequences, masked positions with some padding slots (weight 0), and labels."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(8, seq + 1, size=batch)
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int32)
    ids = rng.integers(5, vocab_size, size=(batch, seq)).astype(np.int32) * mask
    real = rng.integers(1, predictions + 1, size=batch)  # predictions per example
    weights = (np.arange(predictions)[None, :] < real[:, None]).astype(np.float32)
    positions = np.stack([rng.choice(np.arange(1, n), predictions, replace=False)
                          for n in lengths]).astype(np.int32) * weights.astype(np.int32)
    types = ((np.arange(seq)[None, :] >= lengths[:, None] // 2) * mask).astype(np.int32)
    return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types,
            "masked_lm_positions": positions,
            "masked_lm_ids": rng.integers(5, vocab_size, size=(batch, predictions)).astype(
                np.int32) * weights.astype(np.int32),
            "masked_lm_weights": weights,
            "next_sentence_labels": rng.integers(0, 2, size=(batch, 1)).astype(np.int32)}
