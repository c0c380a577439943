"""Parameter counts of a built encoder, broken down by the paper's parts.

Counts come from the weights of a really built `AlbertEncoder`, never from a formula, so they
check the architecture. `count_parameters(config)` builds the encoder with variables that are
declared but never allocated or initialized: counting BERT-xlarge (1.27B) takes seconds and no
memory for weights.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import resource_variable_ops

from albert_tf.config import AlbertConfig
from albert_tf.models.encoder import AlbertEncoder


@dataclasses.dataclass(frozen=True)
class ParameterCounts:
    """Distinct trainable parameters per part (a shared weight counts once)."""

    embedding: int  # word, position and token-type tables and their LayerNorm (width E)
    projection: int  # the E -> H dense (0 when E == H)
    attention: int  # every distinct attention sub-block, its LayerNorm included
    feed_forward: int  # every distinct feed-forward sub-block, its LayerNorm included
    pooler: int

    @property
    def total(self) -> int:
        return (self.embedding + self.projection + self.attention + self.feed_forward
                + self.pooler)

    def rows(self) -> list[tuple[str, int]]:
        return [("embedding", self.embedding), ("projection", self.projection),
                ("attention", self.attention), ("feed_forward", self.feed_forward),
                ("pooler", self.pooler), ("total", self.total)]


def _size(weights) -> int:
    return int(sum(np.prod(w.shape.as_list()) for w in weights))


def parameter_counts(encoder: AlbertEncoder) -> ParameterCounts:
    """The breakdown of a built encoder's distinct weights."""
    embedding = encoder.embedding
    projection = _size(embedding.projection.weights) if embedding.projection else 0
    transformer = encoder.transformer
    return ParameterCounts(
        embedding=_size(embedding.weights) - projection,
        projection=projection,
        attention=_size(w for block in transformer.attention_blocks for w in block.weights),
        feed_forward=_size(w for block in transformer.feed_forward_blocks
                           for w in block.weights),
        pooler=_size(encoder.pooler.weights))


def _declare_without_allocating(next_creator, **kwargs):
    """A variable creator that gives each variable its shape and dtype but no storage.

    TensorFlow has no public API for an unallocated variable; `UninitializedVariable` (in
    `tensorflow.python`) is the one place this package uses a private TensorFlow class, so
    counting xxlarge's 235M parameters needs no 1 GB of memory. `test_parameter_counts`
    pins it (the paper's counts, from models built this way).
    """
    if kwargs.get("shape") is None:
        return next_creator(**kwargs)
    return resource_variable_ops.UninitializedVariable(
        shape=kwargs["shape"], dtype=kwargs.get("dtype"), name=kwargs.get("name"),
        trainable=kwargs.get("trainable") is not False)


@functools.lru_cache(maxsize=128)
def count_parameters(config: AlbertConfig) -> ParameterCounts:
    """Builds the encoder of `config` with unallocated variables and counts its weights.

    Remembered per config (both are frozen): building a paper-scale encoder takes 2-7 s on
    two cores, and an experiment report asks for the same paper-scale models each time it is
    written."""
    with tf.variable_creator_scope(_declare_without_allocating):
        return parameter_counts(AlbertEncoder(config))


def format_parameter_table(counts: ParameterCounts, title: str = "") -> str:
    """A fixed-width table: part, parameters, share of the total, millions."""
    lines = [title] if title else []
    lines.append(f"{'part':<14}{'parameters':>15}{'share':>9}{'millions':>11}")
    lines.append("-" * 49)
    for name, count in counts.rows():
        if name == "total":
            lines.append("-" * 49)
        share = 100.0 * count / counts.total if counts.total else 0.0
        lines.append(f"{name:<14}{count:>15,}{share:>8.1f}%{count / 1e6:>10.2f}M")
    return "\n".join(lines)
