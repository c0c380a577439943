"""Model FLOPs of the encoder, counted from the config.

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


def masked_lm_forward_flops_per_prediction(config: AlbertConfig) -> int:
    """Forward FLOPs of the MLM head at one masked position: the H -> E transform and the
    logits against the tied V x E word embeddings."""
    embedding = config.embedding_size
    return 2 * config.hidden_size * embedding + 2 * embedding * config.vocab_size


def pretraining_step_flops(config: AlbertConfig, batch_size: int, seq_length: int,
                           num_predictions: int) -> int:
    """FLOPs of one pretraining step (forward + backward): the encoder over every token and
    the MLM head over `num_predictions` masked positions per sequence. The sentence head, the
    pooler and the optimizer update are negligible and not counted."""
    forward = (batch_size * seq_length * encoder_forward_flops_per_token(config, seq_length)
               + batch_size * num_predictions * masked_lm_forward_flops_per_prediction(config))
    return TRAINING_TO_FORWARD * forward
