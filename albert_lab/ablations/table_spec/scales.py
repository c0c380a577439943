"""One scale's settings from a table file's mappings: `include: <file>` read in place, values
given per scale (`{paper: 768, mini: 32}`) resolved, and changes merged into defaults.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from albert_lab.ablations.table_spec.settings import ExperimentError
from albert_tf.config.schema import load_yaml_mapping


def with_includes(mapping: Mapping[str, Any], base_dir: str) -> dict[str, Any]:
    """`mapping` with every `include: <file>` (at any depth, relative to `base_dir`) replaced
    by that file's mapping, changed by the keys beside the `include`."""
    result = {key: with_includes(value, base_dir) if isinstance(value, Mapping) else value
              for key, value in mapping.items() if key != "include"}
    if "include" not in mapping:
        return result
    path = os.path.join(base_dir, str(mapping["include"]))
    included = with_includes(load_yaml_mapping(path), os.path.dirname(path))
    return deep_merge(included, result)


def scale_settings(scales: Mapping[str, Any], scale: str, source: str) -> dict[str, Any]:
    """The settings of one scale, its `include`s read (relative to the experiment file)."""
    return with_includes(as_mapping(scales[scale], f"{source}: scales.{scale}"),
                         os.path.dirname(source))


def as_mapping(value, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ExperimentError(f"{where} must be a mapping, got {type(value).__name__}")
    return dict(value)


def resolve_scale(value, scale: str, scales: Sequence[str], where: str,
                  fallback: str = ""):
    """`value` with every `{scale_name: value, ...}` mapping replaced by this scale's value,
    or by the `fallback` scale's where the mapping has no value for this one (a scale that
    keeps another's sizes says so once, in its `variant_values_from`)."""
    if isinstance(value, Mapping):
        if value and set(value) <= set(scales):
            chosen = scale if scale in value else fallback
            if chosen not in value:
                given = f"; nor for its fallback {fallback!r}" if fallback else ""
                raise ExperimentError(f"{where}: no value for scale {scale!r}{given} (given "
                                      f"for {', '.join(value)})")
            return resolve_scale(value[chosen], scale, scales, where, fallback)
        return {key: resolve_scale(item, scale, scales, f"{where}.{key}", fallback)
                for key, item in value.items()}
    if isinstance(value, list):
        return [resolve_scale(item, scale, scales, f"{where}[{index}]", fallback)
                for index, item in enumerate(value)]
    return value


def deep_merge(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `changes` applied: mappings merge key by key, anything else replaces."""
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
