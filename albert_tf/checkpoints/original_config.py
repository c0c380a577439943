"""The original ALBERT `albert_config.json`: reading it into an `AlbertConfig` and writing
one back (the field names of google-research/albert, and what it cannot express)."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping

from albert_tf.config import AlbertConfig, ConfigError
from albert_tf.config.schema import quoted_field


def read_original_config(path: str | os.PathLike) -> AlbertConfig:
    """Reads the `albert_config.json` of the released checkpoints (original field names)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            mapping = json.load(f)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
    return AlbertConfig.from_dict(translate_original_config(mapping, path), source=path)


# Field names of the original albert_config.json -> ours.
_ORIGINAL_FIELDS = {
    "vocab_size": "vocab_size",
    "embedding_size": "embedding_size",
    "hidden_size": "hidden_size",
    "num_hidden_layers": "num_layers",
    "num_attention_heads": "num_attention_heads",
    "intermediate_size": "intermediate_size",
    "hidden_act": "hidden_activation",
    "hidden_dropout_prob": "hidden_dropout",
    "attention_probs_dropout_prob": "attention_dropout",
    "max_position_embeddings": "max_position_embeddings",
    "type_vocab_size": "type_vocab_size",
    "initializer_range": "initializer_range",
    "num_hidden_groups": "num_groups",
    "inner_group_num": "inner_group_num",
}
# Keys the released configs carry that the model itself does not use.
_ORIGINAL_IGNORED = {"net_structure_type", "gap_size", "num_memory_blocks",
                     "down_scale_factor", "layers_to_keep"}
_ORIGINAL_ACTIVATIONS = {"gelu": "gelu_tanh", "gelu_new": "gelu_tanh", "relu": "relu"}


def translate_original_config(mapping: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Maps original ALBERT config keys and activation names onto AlbertConfig fields."""
    translated: dict[str, Any] = {"sharing": "all"}
    for key, value in mapping.items():
        if key in _ORIGINAL_IGNORED:
            continue
        if key not in _ORIGINAL_FIELDS:
            raise ConfigError(f"{source}: unknown key '{key}' in an original ALBERT config "
                              f"(known: {', '.join(sorted(_ORIGINAL_FIELDS))})")
        if key == "hidden_act":
            if value not in _ORIGINAL_ACTIVATIONS:
                raise ConfigError(f"{source}: field 'hidden_act' must be one of "
                                  f"{', '.join(_ORIGINAL_ACTIVATIONS)}, got '{value}'")
            value = _ORIGINAL_ACTIVATIONS[value]
        translated[_ORIGINAL_FIELDS[key]] = value
    return translated


# The released configs' extra keys with the values every released model has.
_ORIGINAL_DEFAULTS = {"net_structure_type": 0, "gap_size": 0, "num_memory_blocks": 0,
                      "down_scale_factor": 1}
_ORIGINAL_EPSILON = 1e-12  # hard-coded in the original code, not a config field


def to_original_config(config: AlbertConfig) -> dict[str, Any]:
    """`config` as an original `albert_config.json` mapping; a ConfigError names any field
    the original code cannot express (it shares whole layers, uses the tanh GELU or ReLU and
    a LayerNorm epsilon of 1e-12)."""
    if config.sharing not in ("all", "none"):
        raise ConfigError(f"{quoted_field('sharing')} '{config.sharing}' has no original ALBERT "
                          f"equivalent (the original shares whole layers within a group)")
    if config.layer_norm_epsilon != _ORIGINAL_EPSILON:
        raise ConfigError(f"{quoted_field('layer_norm_epsilon')} must be {_ORIGINAL_EPSILON} "
                          f"for the original code, got {config.layer_norm_epsilon}")
    activations = {"gelu_tanh": "gelu", "relu": "relu"}
    if config.hidden_activation not in activations:
        raise ConfigError(f"{quoted_field('hidden_activation')} '{config.hidden_activation}' "
                          f"has no original ALBERT name (it has 'gelu' = gelu_tanh and 'relu')")
    values = config.to_dict()
    values["hidden_activation"] = activations[config.hidden_activation]
    if config.sharing == "none":  # BERT: one group per layer
        values["num_groups"] = config.num_layers
    original = {key: values[ours] for key, ours in _ORIGINAL_FIELDS.items()}
    return {**original, **_ORIGINAL_DEFAULTS}
