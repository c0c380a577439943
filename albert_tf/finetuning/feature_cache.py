"""Converted task features cached as TFRecords, keyed by everything they depend on.

Feature conversion (tokenizing, packing, SQuAD windows) is the slow part of a fine-tuning
run's start, so its output is written once as `<cache_dir>/<task>-<split>-<key>.tfrecord`
with a `.json` beside it (row count, each feature's dtype and shape). The key is a digest of
the data files' bytes, the SentencePiece model's bytes, the conversion settings and
`FEATURE_VERSION`, so changing any of them converts again and a stale cache is never read.
Both files are written under temporary names and renamed; the `.json` goes last, so a cache
whose `.json` exists is complete.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import tensorflow as tf

from albert_tf.io.files import atomic_write_bytes
from albert_tf.records.tfrecord import write_records

FEATURE_VERSION = 1  # bump when a conversion changes what it writes


def cache_key(**parts: Any) -> str:
    """A short digest of `parts` (JSON-able values) and the feature version."""
    text = json.dumps({**parts, "feature_version": FEATURE_VERSION}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class CachedFeatures:
    """One converted split on disk: `path` (TFRecord), `count` rows, and per feature its
    numpy dtype name and per-row shape."""

    path: str
    count: int
    specs: Mapping[str, tuple[str, tuple[int, ...]]]

    def dataset(self, names: Iterable[str] | None = None) -> tf.data.Dataset:
        """Rows as dicts of tensors (int32 / float32), in file order."""
        names = list(names or self.specs)
        spec = {name: tf.io.FixedLenFeature(self.specs[name][1], _tf_dtype(self.specs[name][0]))
                for name in names}

        def parse(record):
            row = tf.io.parse_single_example(record, spec)
            return {name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
                    for name, value in row.items()}

        return tf.data.TFRecordDataset(self.path).map(parse, tf.data.AUTOTUNE)

    def arrays(self, names: Iterable[str] | None = None) -> dict[str, np.ndarray]:
        """Every row of `names` as numpy arrays `(count, *shape)`."""
        names = list(names or self.specs)
        columns = {name: [] for name in names}
        for batch in self.dataset(names).batch(4096).as_numpy_iterator():
            for name in names:
                columns[name].append(batch[name])
        return {name: (np.concatenate(parts) if parts else
                       np.zeros((0, *self.specs[name][1]), self.specs[name][0]))
                for name, parts in columns.items()}


def _tf_dtype(numpy_dtype: str) -> tf.DType:
    return tf.float32 if np.dtype(numpy_dtype).kind == "f" else tf.int64


def _example(row: Mapping[str, np.ndarray]) -> bytes:
    feature = {}
    for name, value in row.items():
        flat = np.asarray(value).reshape(-1)
        if flat.dtype.kind == "f":
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=flat))
        else:
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=flat))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def write_features(path: str, arrays: Mapping[str, np.ndarray]) -> CachedFeatures:
    """Writes equally long arrays (one row per example) as a TFRecord plus its `.json`."""
    counts = {name: len(value) for name, value in arrays.items()}
    if len(set(counts.values())) > 1:
        raise ValueError(f"features of different lengths: {counts}")
    count = next(iter(counts.values()), 0)
    specs = {name: (np.asarray(value).dtype.name, tuple(np.asarray(value).shape[1:]))
             for name, value in arrays.items()}
    write_records(path, (_example({name: value[index] for name, value in arrays.items()})
                         for index in range(count)))
    meta = {"count": count, "specs": {name: [dtype, list(shape)]
                                      for name, (dtype, shape) in specs.items()}}
    atomic_write_bytes(path + ".json", json.dumps(meta, indent=1).encode())
    return CachedFeatures(path, count, specs)


def read_features(path: str) -> CachedFeatures | None:
    """The cache at `path`, or None when it is absent or incomplete."""
    if not (os.path.exists(path) and os.path.exists(path + ".json")):
        return None
    with open(path + ".json", encoding="utf-8") as f:
        meta = json.load(f)
    specs = {name: (dtype, tuple(shape)) for name, (dtype, shape) in meta["specs"].items()}
    return CachedFeatures(path, int(meta["count"]), specs)


def cached_features(cache_dir: str, name: str, key: str,
                    convert: Callable[[], Mapping[str, np.ndarray]]) -> CachedFeatures:
    """The features `<cache_dir>/<name>-<key>.tfrecord`, converted with `convert()` and
    written first when they are not there yet."""
    os.makedirs(cache_dir, exist_ok=True)
    path = os.path.join(cache_dir, f"{name}-{key}.tfrecord")
    cached = read_features(path)
    if cached is None:
        cached = write_features(path, convert())
    return cached
