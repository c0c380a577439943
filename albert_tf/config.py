"""Typed configuration: the model config and the one place YAML and overrides become dataclasses.

`AlbertConfig` holds the paper's model hyperparameters (V, E, H, L, sharing). Other concerns
(data, training, optimizer, export) get their own dataclasses in later modules; all of them are
built from plain mappings by `dataclass_from_mapping`, which rejects unknown keys and wrong types
with an error that names the source file and the field.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import types
import typing
from typing import Any, Mapping, Sequence

import yaml

HIDDEN_ACTIVATIONS = ("gelu_tanh", "gelu_exact", "relu")
SHARING_STRATEGIES = ("all", "attention", "ffn", "none")


class ConfigError(ValueError):
    """A configuration value, key or file is invalid; the message names where and what."""


def _field(name: str) -> str:
    return f"field '{name}'"


def _where(source: str | None, name: str) -> str:
    return f"{source}: {_field(name)}" if source else _field(name)


# What the sentence head of a pretrainer learns: sentence order, next sentence, or nothing.
SENTENCE_OBJECTIVES = ("sop", "nsp", "none")


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
                raise ConfigError(f"{_field(name)} must be a positive integer, "
                                  f"got {getattr(self, name)}")
        for name in ("hidden_dropout", "attention_dropout"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ConfigError(f"{_field(name)} must be in [0, 1), "
                                  f"got {getattr(self, name)}")
        for name in ("initializer_range", "layer_norm_epsilon"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{_field(name)} must be positive, "
                                  f"got {getattr(self, name)}")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"{_field('num_attention_heads')}: hidden_size {self.hidden_size} is "
                f"not divisible by num_attention_heads {self.num_attention_heads}")
        if self.hidden_activation not in HIDDEN_ACTIVATIONS:
            hint = (" ('gelu' is ambiguous: the original ALBERT's 'gelu' is 'gelu_tanh')"
                    if self.hidden_activation == "gelu" else "")
            raise ConfigError(f"{_field('hidden_activation')} must be one of "
                              f"{', '.join(HIDDEN_ACTIVATIONS)}, got "
                              f"'{self.hidden_activation}'{hint}")
        if self.sharing not in SHARING_STRATEGIES:
            raise ConfigError(f"{_field('sharing')} must be one of "
                              f"{', '.join(SHARING_STRATEGIES)}, got '{self.sharing}'")
        if self.num_groups > self.num_layers:
            raise ConfigError(f"{_field('num_groups')} ({self.num_groups}) cannot exceed "
                              f"num_layers ({self.num_layers})")
        if self.sharing == "none" and self.num_groups != 1:
            raise ConfigError(f"{_field('num_groups')} must be 1 with sharing 'none' "
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

    @classmethod
    def from_original_json(cls, path: str | os.PathLike) -> "AlbertConfig":
        """Reads the `albert_config.json` of the released checkpoints (original field names)."""
        path = os.fspath(path)
        try:
            with open(path, encoding="utf-8") as f:
                mapping = json.load(f)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
        return cls.from_dict(translate_original_config(mapping, path), source=path)


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
        raise ConfigError(f"{_field('sharing')} '{config.sharing}' has no original ALBERT "
                          f"equivalent (the original shares whole layers within a group)")
    if config.layer_norm_epsilon != _ORIGINAL_EPSILON:
        raise ConfigError(f"{_field('layer_norm_epsilon')} must be {_ORIGINAL_EPSILON} for the "
                          f"original code, got {config.layer_norm_epsilon}")
    activations = {"gelu_tanh": "gelu", "relu": "relu"}
    if config.hidden_activation not in activations:
        raise ConfigError(f"{_field('hidden_activation')} '{config.hidden_activation}' has no "
                          f"original ALBERT name (it has 'gelu' = gelu_tanh and 'relu')")
    values = config.to_dict()
    values["hidden_activation"] = activations[config.hidden_activation]
    if config.sharing == "none":  # BERT: one group per layer
        values["num_groups"] = config.num_layers
    original = {key: values[ours] for key, ours in _ORIGINAL_FIELDS.items()}
    return {**original, **_ORIGINAL_DEFAULTS}


class _YamlLoader(yaml.SafeLoader):
    """SafeLoader that also reads `1e-3` as a float (YAML 1.1 wants `1.0e-3`)."""


_YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+$"),
    list("-+0123456789."))


def parse_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_YamlLoader)


def load_yaml_mapping(path: str | os.PathLike) -> dict[str, Any]:
    """Reads a YAML file whose top level is a mapping; errors name the file and line."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ConfigError(f"{path}: no such config file")
    with open(path, encoding="utf-8") as f:
        try:
            mapping = parse_yaml(f)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = f":{mark.line + 1}" if mark is not None else ""
            raise ConfigError(f"{path}{line}: invalid YAML ({error})") from None
    if mapping is None:
        return {}
    if not isinstance(mapping, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of field: value, "
                          f"got {type(mapping).__name__}")
    return mapping


def apply_overrides(mapping: Mapping[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Applies `a.b=value` strings (values parsed as YAML scalars) to a nested mapping copy."""
    result = _deep_copy(mapping)
    for override in overrides:
        key, sep, raw_value = override.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"override '{override}' must look like field=value or a.b=value")
        path = key.strip().split(".")
        try:
            value = parse_yaml(raw_value) if raw_value.strip() else ""
        except yaml.YAMLError:
            value = raw_value
        node = result
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"override '{override}': '{part}' is a value, not a section")
            node = child
        node[path[-1]] = value
    return result


def _deep_copy(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(v) if isinstance(v, Mapping) else v for k, v in mapping.items()}


def plain_dict(instance) -> dict[str, Any]:
    """A (nested) dataclass as a dict of plain values, tuples as lists, so it dumps as YAML."""
    def plain(value):
        if isinstance(value, dict):
            return {key: plain(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(item) for item in value]
        return value

    return plain(dataclasses.asdict(instance))


def dataclass_from_mapping(cls, mapping: Mapping[str, Any], source: str | None = None):
    """Builds dataclass `cls` from a mapping; nested dataclass fields take nested mappings.

    Unknown keys raise ConfigError listing the known ones; ints are accepted where floats are
    expected; errors from the dataclass's own validation get the source put in front.
    """
    if not isinstance(mapping, Mapping):
        raise ConfigError(f"{source or cls.__name__}: expected a mapping for "
                          f"{cls.__name__}, got {type(mapping).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(mapping) - set(fields))
    if unknown:
        raise ConfigError(f"{_where(source, unknown[0])} is not a field of {cls.__name__} "
                          f"(known: {', '.join(fields)})")
    hints = typing.get_type_hints(cls)
    values = {}
    for name, value in mapping.items():
        hint = hints[name]
        if dataclasses.is_dataclass(hint) and isinstance(value, Mapping):
            value = dataclass_from_mapping(hint, value, source)
        elif hint is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        values[name] = value
    try:
        return _construct_with_source(cls, values, source)
    except TypeError as error:
        raise ConfigError(f"{source or cls.__name__}: {error}") from None


def _construct_with_source(cls, values, source):
    """Builds the dataclass, re-raising validation errors with the source file in front."""
    try:
        return cls(**values)
    except ConfigError as error:
        if source and not str(error).startswith(source):
            raise ConfigError(f"{source}: {error}") from None
        raise


def require(condition: bool, field: str, expected: str, value) -> None:
    """The one field check of the configs: raises `ConfigError("field '<field>' must be
    <expected>, got <value>")` unless `condition`."""
    if not condition:
        raise ConfigError(f"field '{field}' must be {expected}, got {value!r}")


def require_positive(section: str, instance, names: Sequence[str]) -> None:
    """`require` that each of `names` of `instance` is positive."""
    for name in names:
        value = getattr(instance, name)
        require(value > 0, f"{section}.{name}", "positive", value)


def check_field_types(instance) -> None:
    hints = typing.get_type_hints(type(instance))
    for field in dataclasses.fields(instance):
        expected = hints[field.name]
        value = getattr(instance, field.name)
        if not _matches(value, expected):
            raise ConfigError(f"{_field(field.name)} must be of type "
                              f"{_type_name(expected)}, got {value!r}")


def _matches(value, expected) -> bool:
    origin = typing.get_origin(expected)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arm) for arm in typing.get_args(expected))
    if expected is type(None):
        return value is None
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is not None:
        return isinstance(value, origin)
    return isinstance(value, expected)


def _type_name(expected) -> str:
    return getattr(expected, "__name__", str(expected))
