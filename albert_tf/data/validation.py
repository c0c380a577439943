"""Checks of the pretraining shards against the data config, before anything is built.

A wrong glob or shards written with other lengths otherwise surface as a parse error deep in
the first training step, or worse, as silently truncated data. `check_pretraining_files`
reads little: the glob matches, the `manifest.json` beside the shards (when `albert-data
build` wrote one) with every shard it names (there, of its size and record count:
`albert_tf.records.shard_set`) and the first record of each pattern's first file.

Example:
    files = check_pretraining_files(data_config, field="data.train_files")
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Mapping

import tensorflow as tf

from albert_tf.io import files as file_system
from albert_tf.records.features import MANIFEST, PREDICTIONS, PRETRAINING_FEATURES, SEQUENCE
from albert_tf.records.shard_set import check_shard_set
from albert_tf.records.tfrecord import read_records
from albert_tf.text.options import DataPrepError

# The config field that sets each feature length (also its name in the data-prep options).
_LENGTH_FIELDS = {SEQUENCE: "max_seq_length", PREDICTIONS: "max_predictions_per_seq"}


class DataError(ValueError):
    """Pretraining files that cannot be read with the config; the message names the file,
    the config field and what was expected."""


def check_pretraining_files(config, field: str = "data.train_files",
                            model: Mapping[str, Any] | None = None,
                            verify_checksums: bool = False,
                            note: Callable[[str], None] = print) -> list[str]:
    """The files `config.file_patterns` match, in order, after checking they fit the config
    and, in a folder `albert-data build` wrote, the shards its manifest records.

    Args:
        config: a `PretrainingDataConfig` (anything with `file_patterns`, `max_seq_length`
            and `max_predictions_per_seq`).
        field: the config field the patterns came from, named in errors; its prefix
            (`data` of `data.train_files`) names the length fields (`data.max_seq_length`).
        model: what the run's model expects of a manifest beside the shards, by the config
            field that sets it: `model.vocab_size` (the tokenizer's size) and
            `sentence_objective` (what the sentence labels mean); `none` checks nothing.
        verify_checksums: also check each shard's SHA-256 against its manifest (reads
            every byte once).
        note: called with a line to show when the patterns read some of a manifest's shards
            on purpose.

    Raises:
        DataError: a pattern matches nothing; a manifest beside the shards records other
            lengths, another vocabulary size or sentence objective, or shards that are not
            there whole (`albert_tf.records.shard_set`); a pattern's first file is not a
            TFRecord of pretraining examples of the config's lengths.
    """
    if isinstance(config.file_patterns, str):
        raise DataError(f"{field} must be a list of file patterns, got the string "
                        f"{config.file_patterns!r}")
    prefix = field.rpartition(".")[0]
    globbed = [sorted(tf.io.gfile.glob(pattern))  # as the input pipeline matches them
               for pattern in config.file_patterns]
    by_folder: dict[str, list[str]] = {}
    for pattern, matched in zip(config.file_patterns, globbed):
        if not matched:
            raise DataError(f"{field}: no files match {pattern!r}")
        for path in matched:
            by_folder.setdefault(shard_folder(path), []).append(path)
    for folder, paths in by_folder.items():
        manifest = read_shard_manifest(folder, field)
        if manifest is not None:
            _check_manifest(folder, manifest, config, field, prefix, model or {})
            _check_shard_set(folder, manifest, sorted(set(paths)), config.file_patterns,
                             field, verify_checksums, note)
    for matched in globbed:
        _check_first_record(matched[0], config, field, prefix)
    return [path for matched in globbed for path in matched]


def _check_shard_set(folder, manifest, paths, patterns, field, verify, note) -> None:
    try:
        message = check_shard_set(folder, manifest, paths, patterns, field, verify)
    except DataPrepError as error:
        raise DataError(str(error)) from None
    if message:
        note(message)


def shard_lengths(patterns, field: str = "files") -> tuple[int, int]:
    """(max_seq_length, max_predictions_per_seq) the first matching shard was written with,
    read from its first record; evaluation uses it so any model can score any shards."""
    for pattern in patterns:
        for path in sorted(tf.io.gfile.glob(pattern)):
            features = _first_example_features(path, field)
            if features is None:
                continue
            lengths = {}
            for feature in PRETRAINING_FEATURES:
                if feature.length in _LENGTH_FIELDS and feature.name in features:
                    lengths[feature.length] = _length(features[feature.name], feature)
            if len(lengths) != len(_LENGTH_FIELDS):
                raise DataError(f"{path} (matched by {field}): the first record is not a "
                                f"pretraining example (no input_ids / masked_lm_positions)")
            return lengths[SEQUENCE], lengths[PREDICTIONS]
    raise DataError(f"{field}: no records in the files matching "
                    f"{', '.join(repr(pattern) for pattern in patterns)}")


def shard_folder(path: str) -> str:
    """The folder a shard is in (where its manifest is), local or remote."""
    return os.path.dirname(path if file_system.is_remote(path) else os.path.abspath(path))


def _config_field(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def read_shard_manifest(folder: str, field: str = "files") -> dict | None:
    """The `manifest.json` `albert-data build` left in `folder`, or None without one."""
    path = os.path.join(folder, MANIFEST)
    if not file_system.exists(path):
        return None
    try:
        manifest = json.loads(file_system.read_bytes(path))
        if not isinstance(manifest, dict):
            raise ValueError("not an object")
    except ValueError as error:
        raise DataError(f"{path}: not a JSON manifest ({error}); it sits beside the shards "
                        f"of {field}") from None
    return manifest


def _check_manifest(folder: str, manifest: dict, config, field: str, prefix: str,
                    model: Mapping[str, Any]) -> None:
    """The lengths, vocabulary size and sentence objective recorded in `folder`'s
    manifest.json against the config's."""
    path = os.path.join(folder, MANIFEST)
    options = manifest.get("options", {})
    tokenizer = manifest.get("tokenizer", {})
    found = {"model.vocab_size": tokenizer.get("vocab_size"),
             "sentence_objective": options.get("sentence_objective")}
    for name, expected in model.items():
        built = found.get(name)
        if built is None or expected is None or built == expected:
            continue
        if name == "sentence_objective" and expected == "none":
            continue  # a model without a sentence head reads any shards' MLM part
        what = (f"a {built}-piece SentencePiece model ({tokenizer.get('path')})"
                if name == "model.vocab_size" else f"sentence_objective {built}")
        raise DataError(f"{path}: the shards of {field} were built with {what}, but the "
                        f"run's {name} is {expected}; build shards with the run's tokenizer "
                        f"and objective, or set {name} to {built}")
    for name in _LENGTH_FIELDS.values():
        built, expected = options.get(name), getattr(config, name)
        if built is not None and built != expected:
            raise DataError(
                f"{path}: the shards of {field} were built with {name}={built}, but "
                f"{_config_field(prefix, name)} is {expected}; set "
                f"{_config_field(prefix, name)} to {built}")


def _check_first_record(path: str, config, field: str, prefix: str) -> None:
    """Every pretraining feature of `path`'s first record is there with the config's length."""
    features = _first_example_features(path, field)
    if features is None:
        return  # an empty shard: nothing to check, nothing to misread
    for feature in PRETRAINING_FEATURES:
        if feature.name not in features:
            raise DataError(f"{path} (matched by {field}): the first record has no feature "
                            f"{feature.name!r}; is it a pretraining shard?")
        found = _length(features[feature.name], feature)
        expected = feature.size(config.max_seq_length, config.max_predictions_per_seq)
        if found == expected:
            continue
        where = f"{path} (matched by {field}): {feature.name} of the first record"
        name = _LENGTH_FIELDS.get(feature.length)
        if name is None:
            raise DataError(f"{where} has length {found}, expected {expected}; is it a "
                            "pretraining shard?")
        setting = _config_field(prefix, name)
        raise DataError(f"{where} has length {found} but {setting} is {expected}; set "
                        f"{setting} to {found}, the length the shards were written with")


def _length(values, feature) -> int:
    return len(values.float_list.value if feature.dtype == "float32"
               else values.int64_list.value)


def _first_example_features(path: str, field: str):
    """The feature map of `path`'s first tf.train.Example, or None for an empty file."""
    record = _first_record(path, field)
    if record is None:
        return None
    try:
        return tf.train.Example.FromString(record).features.feature
    except Exception as error:  # protobuf's DecodeError
        raise DataError(f"{path} (matched by {field}): the first record is not a "
                        f"tf.train.Example ({error})") from None


def _first_record(path: str, field: str) -> bytes | None:
    try:
        return next(iter(read_records(path)), None)
    except DataPrepError as error:
        reason = str(error).removeprefix(f"{path}: ")
        raise DataError(f"{path} (matched by {field}) is not a TFRecord file: {reason}") from None
    except Exception as error:  # OSError locally, tf.errors.OpError on remote filesystems
        reason = getattr(error, "strerror", None) or getattr(error, "message", None) or error
        raise DataError(f"{path} (matched by {field}) cannot be read: {reason}") from None


def manifest_example_count(files: list[str]) -> int | None:
    """Examples in `files` by their folders' manifests; None when a file has no manifest
    entry (shards written by other tools)."""
    entries: dict[str, int] = {}
    for folder in sorted({shard_folder(path) for path in files}):
        manifest = read_shard_manifest(folder) or {}
        for shard in manifest.get("shards", []):
            if isinstance(shard, dict) and isinstance(shard.get("examples"), int):
                entries[os.path.join(folder, str(shard.get("file")))] = shard["examples"]
    counts = [entries.get(os.path.join(shard_folder(path), os.path.basename(path)))
              for path in files]
    return None if not counts or None in counts else sum(counts)
