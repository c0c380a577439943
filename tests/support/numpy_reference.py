"""An independent numpy forward pass of ALBERT, written from the paper and the original code's
numerics, to check the Keras model against.

Weights come in as a plain dict of arrays with the original code's structure:
`embeddings`: word [V,E], position [P,E], token_type [T,E], ln_gamma, ln_beta [E],
`projection`: (kernel [E,H], bias [H]) or None;
`groups[g][j]`: dict with q/k/v/o kernels [H,H] and biases, ln1 (gamma, beta),
ffn_in (kernel [H,I], bias), ffn_out (kernel [I,H], bias), ln2 (gamma, beta) -- for the
all-shared layout, where layer i runs the inner blocks of group int(i * N / L);
`pooler`: (kernel [H,H], bias [H]).
"""

from __future__ import annotations

import math

import numpy as np


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def layer_norm(x, gamma, beta, epsilon=1e-12):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def softmax(x):
    shifted = np.exp(x - x.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)


def attention(x, mask, block, num_heads):
    batch, seq, hidden = x.shape
    head = hidden // num_heads

    def heads(t):
        return t.reshape(batch, seq, num_heads, head).transpose(0, 2, 1, 3)

    q = heads(x @ block["q"][0] + block["q"][1])
    k = heads(x @ block["k"][0] + block["k"][1])
    v = heads(x @ block["v"][0] + block["v"][1])
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head)
    scores = scores + (1.0 - mask[:, None, None, :]) * -10000.0
    context = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
    return layer_norm(x + context @ block["o"][0] + block["o"][1], *block["ln1"])


def feed_forward(x, block, activation=gelu_tanh):
    inner = activation(x @ block["ffn_in"][0] + block["ffn_in"][1])
    return layer_norm(x + inner @ block["ffn_out"][0] + block["ffn_out"][1], *block["ln2"])


def albert_forward(weights, word_ids, mask, type_ids, num_layers, num_heads):
    """Returns (sequence_output, pooled_output, all_block_outputs) as float64 arrays."""
    emb = weights["embeddings"]
    seq = word_ids.shape[1]
    x = emb["word"][word_ids] + emb["token_type"][type_ids] + emb["position"][:seq][None]
    x = layer_norm(x, emb["ln_gamma"], emb["ln_beta"])
    if weights["projection"] is not None:
        x = x @ weights["projection"][0] + weights["projection"][1]
    mask = mask.astype(np.float64)
    groups = weights["groups"]
    outputs = []
    for layer in range(num_layers):
        group = int(layer * len(groups) / num_layers)
        for block in groups[group]:
            x = feed_forward(attention(x, mask, block, num_heads), block)
            outputs.append(x)
    pooled = np.tanh(x[:, 0] @ weights["pooler"][0] + weights["pooler"][1])
    return x, pooled, outputs


def log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def masked_lm_log_probs(sequence, positions, head, word_embeddings, activation=gelu_tanh):
    """Log-probabilities over the vocabulary at `positions` (batch, P): gather, dense H -> E
    with the activation, LayerNorm, tied output embedding plus bias."""
    gathered = np.take_along_axis(sequence, positions[..., None], axis=1)
    hidden = activation(gathered @ head["dense"][0] + head["dense"][1])
    hidden = layer_norm(hidden, *head["ln"])
    return log_softmax(hidden @ word_embeddings.T + head["output_bias"])


def sentence_logits(pooled, output_weights, output_bias):
    """The 2-way SOP/NSP logits; the original stores the weights as [2, H]."""
    return pooled @ output_weights.T + output_bias
