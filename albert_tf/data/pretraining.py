"""The tf.data input pipeline for pretraining shards (ours or the original script's).

Records are parsed with the one feature spec of `albert_tf.records.features`, ints cast to int32
(what TPUs want) and renamed to the model's input names (`input_ids` -> `input_word_ids`,
`segment_ids` -> `input_type_ids`). Training reads shards interleaved, in a per-replica slice
when given a `tf.distribute.InputContext`, shuffles, repeats and batches with
`drop_remainder` (static shapes for XLA and TPU).

With a `seed`, the training stream is deterministic, so `start_batch` resumes it where a run
stopped; `dynamic_masking` masks every batch afresh (`albert_tf.data.remasking`).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import tensorflow as tf

from albert_tf.config.masking import MaskingRecipe
from albert_tf.data import remasking
from albert_tf.records.features import decode_record


@dataclasses.dataclass(frozen=True)
class PretrainingDataConfig:
    """Where the shards are, how to batch them, and where in the stream to start.

    Attributes:
        file_patterns: TFRecord files or globs.
        max_seq_length, max_predictions_per_seq: the lengths the shards were written with.
        global_batch_size: examples per step over all replicas.
        is_training: shuffle and repeat; else one ordered pass.
        shuffle_buffer: examples held for shuffling (training only).
        cycle_length: shards read at once.
        seed: shuffling (and re-masking) seed. With a seed the training stream is a pure
            function of the files and the config; None: nondeterministic, faster reading.
        start_batch: batches of this input pipeline to skip (steps already trained, when
            resuming): with a seed, the dataset yields batches start_batch, start_batch + 1,
            ... of the dataset with start_batch 0. They are skipped before parsing.
        dynamic_masking: (training only) mask every batch afresh, as RoBERTa does, instead of
            using the masks written in the shards (see `albert_tf.data.remasking`).
        masking: the recipe of dynamic masking (a run's `data` section holds its fields).
        dynamic_predictions_per_seq: prediction slots of the re-masked batches (None: the
            shards' `max_predictions_per_seq`); dynamic masking only.
        vocab_size: the model's vocabulary size; required by dynamic masking, whose random
            replacements are ids 5 .. vocab_size - 1.
    """

    file_patterns: Sequence[str]
    max_seq_length: int
    max_predictions_per_seq: int
    global_batch_size: int
    is_training: bool = True
    shuffle_buffer: int = 10_000
    cycle_length: int = 8
    seed: int | None = None
    start_batch: int = 0
    dynamic_masking: bool = False
    masking: MaskingRecipe = MaskingRecipe()
    vocab_size: int | None = None
    dynamic_predictions_per_seq: int | None = None

    def __post_init__(self):
        if self.start_batch < 0:
            raise ValueError(f"start_batch must be at least 0, got {self.start_batch}")
        if self.vocab_size is not None and self.vocab_size <= remasking.FIRST_ORDINARY_ID:
            raise ValueError(f"vocab_size must be above {remasking.FIRST_ORDINARY_ID} (ids 0-4 "
                             f"are <pad>, <unk>, [CLS], [SEP], [MASK]), got {self.vocab_size}")
        if self.dynamic_masking:
            if self.vocab_size is None:
                raise ValueError("vocab_size must be set when dynamic_masking is on: random "
                                 "replacements are drawn from ids 5 .. vocab_size - 1 (use the "
                                 "model's vocab_size)")
        elif self.dynamic_predictions_per_seq is not None:
            raise ValueError("dynamic_predictions_per_seq needs dynamic_masking: static masks "
                             "have the shards' max_predictions_per_seq slots")

    @property
    def predictions_per_seq(self) -> int:
        """Prediction slots per sequence of the batches this pipeline yields."""
        return self.dynamic_predictions_per_seq or self.max_predictions_per_seq


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
    `global_batch_size / num_replicas_in_sync` examples. Each element is a dict of
    (batch_size, max_seq_length) `input_word_ids`, `input_mask`, `input_type_ids`;
    (batch_size, config.predictions_per_seq) `masked_lm_positions`, `masked_lm_ids`,
    `masked_lm_weights` and (batch_size, 1) `next_sentence_labels`.
    """
    batch_size, pipelines, pipeline = config.global_batch_size, 1, 0
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(config.global_batch_size)
        pipelines, pipeline = input_context.num_input_pipelines, input_context.input_pipeline_id
    dataset = _serialized_records(config, list_shards(config.file_patterns), pipelines, pipeline)
    dataset = dataset.batch(batch_size, drop_remainder=config.is_training)
    # Resuming: the skipped batches are read and shuffled, never parsed or masked.
    if config.start_batch:
        dataset = dataset.skip(config.start_batch)
    dynamic = config.is_training and config.dynamic_masking

    def decode(records):
        return decode_record(records, config.max_seq_length, config.max_predictions_per_seq,
                             with_token_boundary=dynamic)
    if dynamic:
        seed = config.seed if config.seed is not None else _fresh_seed()
        remask = remasking.BatchRemasker(config, pipeline, seed)
        dataset = dataset.enumerate(start=config.start_batch).map(
            lambda index, records: remask(index, decode(records)),
            num_parallel_calls=tf.data.AUTOTUNE)
    else:
        dataset = dataset.map(decode, num_parallel_calls=tf.data.AUTOTUNE)
    if config.seed is not None:
        options = tf.data.Options()
        options.deterministic = True
        dataset = dataset.with_options(options)
    return dataset.prefetch(tf.data.AUTOTUNE)


def _serialized_records(config: PretrainingDataConfig, files: list[str], pipelines: int,
                        pipeline: int) -> tf.data.Dataset:
    """This input pipeline's serialized records: shuffled and repeated when training.

    Reading order is deterministic unless training without a seed (then shards are
    interleaved in whatever order their reads finish).
    """
    deterministic = not config.is_training or config.seed is not None
    dataset = tf.data.Dataset.from_tensor_slices(files)
    if len(files) >= pipelines:
        # Each input pipeline reads its own files. One pass reads each file once, in a fresh
        # order every pass; only the whole pass repeats. (Repeating the file names before
        # interleaving them, with fewer files than `cycle_length`, would open the same file
        # in several slots at once and feed every example two or more times within a few
        # thousand examples: a small model then memorizes its sentence labels.)
        dataset = dataset.shard(pipelines, pipeline)
        if config.is_training:
            dataset = dataset.shuffle(len(files), seed=config.seed,
                                      reshuffle_each_iteration=True)
        dataset = _read_interleaved(dataset, config, deterministic)
        if config.is_training:
            dataset = dataset.repeat()
    else:
        # Fewer files than pipelines: every pipeline reads all records in the same order and
        # keeps every n-th, so no two replicas see the same example.
        dataset = _read_interleaved(dataset, config, deterministic=True).shard(pipelines, pipeline)
        if config.is_training:
            dataset = dataset.repeat()
    if config.is_training:
        dataset = dataset.shuffle(config.shuffle_buffer, seed=config.seed)
    return dataset


def _fresh_seed() -> int:
    """A base seed for re-masking without a configured seed (masks then differ per run)."""
    return int(np.random.SeedSequence().entropy % 2**63)


def _read_interleaved(files: tf.data.Dataset, config: PretrainingDataConfig,
                      deterministic: bool) -> tf.data.Dataset:
    return files.interleave(tf.data.TFRecordDataset, cycle_length=config.cycle_length,
                            num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic)
