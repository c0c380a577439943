"""Model FLOPs of the encoder, counted from the config (../shared/design/flops.md).

A multiply-add is 2 FLOPs. Shared weights still cost compute at every one of the L layer
applications. Backward costs about twice the forward, so a training step is 3x the forward.
Only matmuls are counted (softmax, LayerNorm, GELU and the pooler are negligible), which is
the usual convention for model-FLOPs utilisation.
"""

from __future__ import annotations

from albert_tf.config import AlbertConfig

TRAINING_TO_FORWARD = 3


def encoder_forward_flops_per_token(config: AlbertConfig, seq_length: int) -> int:
    """Forward FLOPs per token of a length-`seq_length` sequence through the encoder."""
    hidden, inner = config.hidden_size, config.intermediate_size
    per_block = (2 * 4 * hidden * hidden  # query, key, value and output projections
                 + 2 * 2 * seq_length * hidden  # scores q.k and the weighted sum of values
                 + 2 * 2 * hidden * inner)  # the two feed-forward matmuls
    blocks = config.num_layers * config.inner_group_num
    projection = 2 * config.embedding_size * hidden if config.embedding_size != hidden else 0
    return blocks * per_block + projection


def encoder_training_flops(config: AlbertConfig, batch_size: int, seq_length: int) -> int:
    """FLOPs of one forward + backward pass of the encoder over a full batch."""
    return (TRAINING_TO_FORWARD * batch_size * seq_length
            * encoder_forward_flops_per_token(config, seq_length))
