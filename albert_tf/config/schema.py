"""The configuration framework every config dataclass of the package is built with: YAML
(with `1e-3` read as a float), `section.field=value` overrides, mappings to frozen
dataclasses with unknown keys and wrong types named by file and field, and the one field
check, `require`. No TensorFlow."""

from __future__ import annotations

import dataclasses
import os
import re
import types
import typing
from collections.abc import Hashable
from typing import Any, Mapping, Sequence

import yaml


class ConfigError(ValueError):
    """A configuration value, key or file is invalid; the message names where and what."""


def quoted_field(name: str) -> str:
    return f"field '{name}'"


def located_field(source: str | None, name: str) -> str:
    return f"{source}: {quoted_field(name)}" if source else quoted_field(name)


class _YamlLoader(yaml.SafeLoader):
    """SafeLoader that also reads `1e-3` as a float (YAML 1.1 wants `1.0e-3`) and refuses a
    key given twice in one mapping (PyYAML keeps the last silently: a setting a reader sees
    higher up the file would not be the one used)."""

    def construct_mapping(self, node, deep=False):
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if isinstance(key, Hashable) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice (first on line {seen[key]})",
                    key_node.start_mark)
            if isinstance(key, Hashable):
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


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


def setting_differences(old: Any, new: Any, path: str = "") -> list[str]:
    """`field: old -> new` for every leaf in which two nested mappings differ, by dotted
    path, sorted (a key only one side has differs from None)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        return [difference for key in sorted(set(old) | set(new))
                for difference in setting_differences(old.get(key), new.get(key),
                                                      f"{path}.{key}" if path else key)]
    return [] if old == new else [f"{path}: {old!r} -> {new!r}"]


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
        raise ConfigError(f"{located_field(source, unknown[0])} is not a field of {cls.__name__} "
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


def require_one_of(value, choices: Sequence, field: str) -> None:
    """`require` that `value` is one of `choices` (listed in the message)."""
    require(value in choices, field, f"one of {', '.join(map(str, choices))}", value)


def require_patterns(patterns, field: str) -> None:
    """`require` a list of regular expressions (not one string), each of which compiles."""
    require(not isinstance(patterns, str), field, "a list of regular expressions", patterns)
    for pattern in patterns:
        require(isinstance(pattern, str), field, "a list of strings", pattern)
        try:
            re.compile(pattern)
        except re.error as error:
            raise ConfigError(f"field '{field}': {pattern!r} is not a regular expression "
                              f"({error})") from None


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
            raise ConfigError(f"{quoted_field(field.name)} must be of type "
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
