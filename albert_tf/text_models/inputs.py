"""What `fit`, `evaluate` and `predict` of a raw-text model accept, as one `tf.data` pipeline.

Python data (lists or arrays of strings, and labels) becomes a dataset of named columns
(`{"text": ..., "label": ...}`), shuffled for training, batched, and preprocessed in the
graph batch by batch (so each batch is padded to its own longest row). A `tf.data.Dataset`
goes the same way from its elements: `x` or `(x, y)`, batched or not.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
import tensorflow as tf

DEFAULT_BATCH_SIZE = 32
Columns = Mapping[str, Any]


def python_columns(columns: Columns, labels: Columns | None) -> dict[str, Any]:
    """`columns` (and the label columns) as one mapping, after checking that every column has
    the same number of rows; a ValueError names the column that differs."""
    merged = {**columns, **(labels or {})}
    counts = {name: len(values) for name, values in merged.items()}
    if len(set(counts.values())) > 1:
        shown = ", ".join(f"{name}: {count}" for name, count in counts.items())
        raise ValueError(f"the inputs have different numbers of rows ({shown})")
    return merged


def text_batches(x, y, batch_size: int | None, shuffle: bool,
                 to_columns: Callable[[Any], Columns],
                 to_labels: Callable[[Any], Columns],
                 graph_labels: Callable[[Any], Columns],
                 preprocess: Callable[[Columns], Mapping[str, tf.Tensor]]) -> tf.data.Dataset:
    """Batches of model features from raw data.

    Args:
        x: the texts, in the form the model's `to_columns` reads; or a `tf.data.Dataset` of
            `x` or `(x, y)` elements (batched or not; an unbatched one is batched here).
        y: the labels (Python data), or None (prediction, or labels inside the dataset).
        batch_size: rows per batch (32 when None) for Python data and unbatched datasets.
        shuffle: shuffle Python rows (anew every epoch) before batching.
        to_columns: x (Python or tensors) -> named text columns.
        to_labels: Python y -> named label columns (numpy).
        graph_labels: a dataset's y (tensors) -> named label columns (tensors).
        preprocess: a batch of columns -> model features (in the graph).
    """
    batch_size = batch_size or DEFAULT_BATCH_SIZE
    if isinstance(x, tf.data.Dataset):
        if y is not None:
            raise ValueError("y must be None when x is a tf.data.Dataset: the dataset's "
                             "elements carry their labels as (x, y)")
        dataset = x.map(lambda *element: _element_columns(element, to_columns, graph_labels))
        first = next(iter(dataset.element_spec.values()))  # one text per row
        if first.shape.rank == 0:
            dataset = dataset.batch(batch_size)
    else:
        merged = python_columns(to_columns(x), None if y is None else to_labels(y))
        count = len(next(iter(merged.values())))
        dataset = tf.data.Dataset.from_tensor_slices(
            {name: _as_array(values) for name, values in merged.items()})
        if shuffle:
            dataset = dataset.shuffle(max(count, 1), reshuffle_each_iteration=True)
        dataset = dataset.batch(batch_size)
    return dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE).prefetch(
        tf.data.AUTOTUNE)


def _element_columns(element: tuple, to_columns, graph_labels) -> dict[str, tf.Tensor]:
    """A dataset element, `x` or `(x, y)` (Keras's convention), as named columns."""
    if len(element) == 1:
        return dict(to_columns(element[0]))
    if len(element) == 2:
        return {**to_columns(element[0]), **graph_labels(element[1])}
    raise ValueError(f"a dataset element must be x or (x, y); got {len(element)} parts "
                     f"(sample weights are not supported)")


def _as_array(values) -> np.ndarray:
    """A column as numpy: strings as an object array (tf.string), numbers as they are."""
    array = np.asarray(values)
    if array.dtype.kind in "UO":
        return array.astype(object)
    return array
