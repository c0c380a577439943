"""The tf.data input pipeline for pretraining shards (ours or the original script's).

Records are parsed with the one feature spec of `albert_tf.data.features`, ints cast to int32
(what TPUs want) and renamed to the model's input names (`input_ids` -> `input_word_ids`,
`segment_ids` -> `input_type_ids`). Training reads shards interleaved, in a per-replica slice
when given a `tf.distribute.InputContext`, shuffles, repeats and batches with
`drop_remainder` (static shapes for XLA and TPU).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import tensorflow as tf

from albert_tf.data.features import MODEL_INPUT_NAMES, tf_parse_spec


@dataclasses.dataclass(frozen=True)
class PretrainingDataConfig:
    """Where the shards are and how to batch them.

    Attributes:
        file_patterns: TFRecord files or globs.
        max_seq_length, max_predictions_per_seq: the lengths the shards were written with.
        global_batch_size: examples per step over all replicas.
        is_training: shuffle and repeat; else one ordered pass.
        shuffle_buffer: examples held for shuffling (training only).
        cycle_length: shards read at once.
        seed: shuffling seed (None: nondeterministic).
    """

    file_patterns: Sequence[str]
    max_seq_length: int
    max_predictions_per_seq: int
    global_batch_size: int
    is_training: bool = True
    shuffle_buffer: int = 10_000
    cycle_length: int = 8
    seed: int | None = None


def decode_record(serialized: tf.Tensor, max_seq_length: int,
                  max_predictions: int) -> dict[str, tf.Tensor]:
    """One serialized example (or a batch of them) -> dict of int32/float32 tensors.

    Keys are the model's input names; shapes (max_seq_length,) for the sequence features,
    (max_predictions,) for the masked-LM ones and (1,) for `next_sentence_labels`.
    """
    spec = tf_parse_spec(max_seq_length, max_predictions)
    if serialized.shape.rank == 0:
        parsed = tf.io.parse_single_example(serialized, spec)
    else:
        parsed = tf.io.parse_example(serialized, spec)
    features = {}
    for name, tensor in parsed.items():
        if name not in MODEL_INPUT_NAMES:
            continue  # token_boundary: kept in the files for compatibility, unused in training
        if tensor.dtype == tf.int64:
            tensor = tf.cast(tensor, tf.int32)
        features[MODEL_INPUT_NAMES[name]] = tensor
    return features


def list_shards(file_patterns: Sequence[str]) -> list[str]:
    files = []
    for pattern in file_patterns:
        matched = sorted(tf.io.gfile.glob(pattern))
        if not matched:
            raise FileNotFoundError(f"no pretraining shards match {pattern!r}")
        files.extend(matched)
    return files


def pretraining_dataset(config: PretrainingDataConfig,
                        input_context: tf.distribute.InputContext | None = None) -> tf.data.Dataset:
    """Batches of decoded examples; per-replica batches when given an `input_context`.

    Use with `strategy.distribute_datasets_from_function(lambda ctx: pretraining_dataset(
    config, ctx))`: each input pipeline reads its own slice of the shards and batches
    `global_batch_size / num_replicas_in_sync` examples.
    """
    files = list_shards(config.file_patterns)
    batch_size = config.global_batch_size
    pipelines, pipeline = 1, 0
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(config.global_batch_size)
        pipelines, pipeline = input_context.num_input_pipelines, input_context.input_pipeline_id
    dataset = tf.data.Dataset.from_tensor_slices(files)
    if len(files) >= pipelines:
        # Each input pipeline reads its own files.
        dataset = dataset.shard(pipelines, pipeline)
        if config.is_training:
            dataset = dataset.shuffle(len(files), seed=config.seed).repeat()
        dataset = _read_interleaved(dataset, config, deterministic=not config.is_training)
    else:
        # Fewer files than pipelines: every pipeline reads all records in the same order and
        # keeps every n-th, so no two replicas see the same example.
        dataset = _read_interleaved(dataset, config, deterministic=True).shard(pipelines, pipeline)
        if config.is_training:
            dataset = dataset.repeat()
    if config.is_training:
        dataset = dataset.shuffle(config.shuffle_buffer, seed=config.seed)
    dataset = dataset.batch(batch_size, drop_remainder=config.is_training)
    dataset = dataset.map(
        lambda records: decode_record(records, config.max_seq_length,
                                      config.max_predictions_per_seq),
        num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)


def _read_interleaved(files: tf.data.Dataset, config: PretrainingDataConfig,
                      deterministic: bool) -> tf.data.Dataset:
    return files.interleave(tf.data.TFRecordDataset, cycle_length=config.cycle_length,
                            num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic)
