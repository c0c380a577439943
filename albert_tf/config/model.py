"""`AlbertConfig`: the paper's model hyperparameters (V, E, H, L, sharing, groups).

Every config dataclass of the package (this one, the run sections, the optimizer, ...) is
built from plain mappings by `albert_tf.config.schema`, which rejects unknown keys and wrong
types with an error naming the source file and the field; the original `albert_config.json`
is read and written by `albert_tf.checkpoints.original_config`.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Mapping, Sequence

from albert_tf.config.schema import (
    ConfigError,  # the error of every config, re-exported with the model config
    apply_overrides,
    check_field_types,
    dataclass_from_mapping,
    load_yaml_mapping,
    quoted_field,
)

# What the sentence head of a pretrainer learns (sentence order, next sentence, or nothing),
# and so what the shards' labels mean (the writer reads it from here).
SENTENCE_OBJECTIVES = ("sop", "nsp", "none")

HIDDEN_ACTIVATIONS = ("gelu_tanh", "gelu_exact", "relu")
SHARING_STRATEGIES = ("all", "attention", "ffn", "none")
# What a sentence task's head reads: the pooled [CLS] output, or the sequence output's mean
# over the real pieces (`albert_tf.layers.pooler`).
SENTENCE_POOLINGS = ("cls", "mean")


@dataclasses.dataclass(frozen=True)
class AlbertConfig:
    """ALBERT model hyperparameters (defaults: ALBERT-base of Table 2, no dropout as in v2).

    Attributes:
        vocab_size: V, rows of the word-embedding table.
        embedding_size: E, width of all embeddings before the E -> H projection.
        hidden_size: H, width of the transformer.
        num_layers: L, how many times a transformer block is applied.
        num_attention_heads: heads per attention; must divide `hidden_size`.
        intermediate_size: feed-forward inner width (4H in the paper).
        hidden_activation: `gelu_tanh` (what the original code calls "gelu"), `gelu_exact`
            (erf form) or `relu`.
        hidden_dropout: dropout after embeddings, attention output and feed-forward output.
        attention_dropout: dropout on the attention probabilities.
        max_position_embeddings: rows of the position table (the longest sequence).
        type_vocab_size: rows of the token-type table.
        initializer_range: stddev of the truncated-normal weight initializer.
        layer_norm_epsilon: LayerNorm epsilon.
        sharing: which sub-blocks the layers of a group share: `all`, `attention`, `ffn`
            or `none` (Table 5).
        num_groups: L layers in N groups; layer i uses group int(i * N / L).
        inner_group_num: transformer blocks applied in sequence within each layer.
    """

    vocab_size: int = 30000
    embedding_size: int = 128
    hidden_size: int = 768
    num_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_activation: str = "gelu_tanh"
    hidden_dropout: float = 0.0
    attention_dropout: float = 0.0
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    layer_norm_epsilon: float = 1e-12
    sharing: str = "all"
    num_groups: int = 1
    inner_group_num: int = 1

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Raises ConfigError naming the first invalid field."""
        check_field_types(self)
        for name in ("vocab_size", "embedding_size", "hidden_size", "num_layers",
                     "num_attention_heads", "intermediate_size", "max_position_embeddings",
                     "type_vocab_size", "num_groups", "inner_group_num"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{quoted_field(name)} must be a positive integer, "
                                  f"got {getattr(self, name)}")
        for name in ("hidden_dropout", "attention_dropout"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ConfigError(f"{quoted_field(name)} must be in [0, 1), "
                                  f"got {getattr(self, name)}")
        for name in ("initializer_range", "layer_norm_epsilon"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{quoted_field(name)} must be positive, "
                                  f"got {getattr(self, name)}")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"{quoted_field('num_attention_heads')}: hidden_size {self.hidden_size} is "
                f"not divisible by num_attention_heads {self.num_attention_heads}")
        if self.hidden_activation not in HIDDEN_ACTIVATIONS:
            hint = (" ('gelu' is ambiguous: the original ALBERT's 'gelu' is 'gelu_tanh')"
                    if self.hidden_activation == "gelu" else "")
            raise ConfigError(f"{quoted_field('hidden_activation')} must be one of "
                              f"{', '.join(HIDDEN_ACTIVATIONS)}, got "
                              f"'{self.hidden_activation}'{hint}")
        if self.sharing not in SHARING_STRATEGIES:
            raise ConfigError(f"{quoted_field('sharing')} must be one of "
                              f"{', '.join(SHARING_STRATEGIES)}, got '{self.sharing}'")
        if self.num_groups > self.num_layers:
            raise ConfigError(f"{quoted_field('num_groups')} ({self.num_groups}) cannot exceed "
                              f"num_layers ({self.num_layers})")
        if self.sharing == "none" and self.num_groups != 1:
            raise ConfigError(f"{quoted_field('num_groups')} must be 1 with sharing 'none' "
                              f"(groups only say which layers share weights), "
                              f"got {self.num_groups}")

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_attention_heads

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes) -> "AlbertConfig":
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any], source: str | None = None) -> "AlbertConfig":
        return dataclass_from_mapping(cls, mapping, source)

    @classmethod
    def from_yaml(cls, path: str | os.PathLike,
                  overrides: Sequence[str] = ()) -> "AlbertConfig":
        mapping = apply_overrides(load_yaml_mapping(path), overrides)
        source = os.fspath(path) + (" with overrides " + " ".join(overrides) if overrides else "")
        return cls.from_dict(mapping, source=source)
