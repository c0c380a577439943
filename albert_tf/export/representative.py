"""Representative inputs for full-integer quantization: the id inputs of real examples, read
from pretraining shards or from a task folder.

Full-integer int8 needs the range every activation takes, which the converter measures by
running the float model on examples like the ones it will serve. Two sources a user has:

- pretraining shards (`albert-data build`'s folder of `.tfrecord` files, a glob, or one
  file): their `input_ids` / `input_mask` / `segment_ids`, cut to each example's length;
- a task folder (a GLUE task's folder, or one `albert-data task` wrote, with its
  `source.json`): the texts of its training split, tokenized with the model's tokenizer.
"""

from __future__ import annotations

import glob
import os
from typing import Iterator

import numpy as np

from albert_tf.export.loading import ExportError
from albert_tf.tokenization import AlbertTokenizer

SHARD_PATTERN = "*.tfrecord"


def representative_inputs(path: str, tokenizer: AlbertTokenizer, max_seq_length: int,
                          count: int = 200) -> list[dict[str, np.ndarray]]:
    """Up to `count` examples' id inputs, each a dict of int32 `(1, length)` arrays.

    Args:
        path: a shard folder, a shard glob or file, or a task folder.
        tokenizer: the model's tokenizer (task folders only).
        max_seq_length: longest packed example; shard examples are cut to it too.
        count: how many examples (the first ones, in file order).
    Raises:
        ExportError: the path holds neither shards nor a task's training split, or no
            examples.
    """
    shards = _shard_files(path)
    if shards:
        examples = _shard_examples(shards, max_seq_length)
    elif os.path.isdir(path):
        examples = _task_examples(path, tokenizer, max_seq_length)
    else:
        raise ExportError(f"{path}: no such folder or file; the representative data is "
                          f"pretraining shards (a folder of {SHARD_PATTERN}, a glob or a "
                          f"file) or a task folder")
    chosen = [example for _, example in zip(range(count), examples)]
    if not chosen:
        raise ExportError(f"{path}: holds no examples to calibrate int8 quantization on")
    return chosen


def _shard_files(path: str) -> list[str]:
    if os.path.isdir(path):
        return sorted(glob.glob(os.path.join(path, SHARD_PATTERN)))
    if os.path.isfile(path):
        return [path]
    return sorted(glob.glob(path))


def _shard_examples(files: list[str], max_seq_length: int) -> Iterator[dict[str, np.ndarray]]:
    import tensorflow as tf

    spec = {name: tf.io.VarLenFeature(tf.int64)
            for name in ("input_ids", "input_mask", "segment_ids")}
    for serialized in tf.data.TFRecordDataset(files):
        try:
            parsed = tf.io.parse_single_example(serialized, spec)
        except tf.errors.InvalidArgumentError as error:
            raise ExportError(f"{', '.join(files)}: not pretraining shards ({error.message})") \
                from None
        mask = tf.sparse.to_dense(parsed["input_mask"]).numpy()
        length = min(int(mask.sum()), max_seq_length)
        if length == 0:
            continue
        columns = {"input_word_ids": "input_ids", "input_mask": "input_mask",
                   "input_type_ids": "segment_ids"}
        yield {name: tf.sparse.to_dense(parsed[feature]).numpy()[None, :length].astype(np.int32)
               for name, feature in columns.items()}


def _task_examples(folder: str, tokenizer: AlbertTokenizer,
                   max_seq_length: int) -> Iterator[dict[str, np.ndarray]]:
    from albert_tf.task_data.glue import read_glue
    from albert_tf.task_data.glue_table import (
        FOLDER_DESCRIPTION,
        folder_classification_task,
        get_glue_task,
    )

    if os.path.exists(os.path.join(folder, FOLDER_DESCRIPTION)):
        task = folder_classification_task(folder)
    else:
        try:
            task = get_glue_task(os.path.basename(os.path.normpath(folder)))
        except ValueError:
            raise ExportError(f"{folder}: neither pretraining shards ({SHARD_PATTERN}) nor a "
                              f"task folder (a {FOLDER_DESCRIPTION} or a GLUE task's name)") \
                from None
    for example in read_glue(task, folder, "train"):
        pair = None if example.text_b is None else [example.text_b]
        yield tokenizer.encode_for_model([example.text_a], pair, max_seq_length=max_seq_length)
