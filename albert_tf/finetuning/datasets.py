"""tf.data pipelines over cached task features: shuffled endless training batches and
padded, ordered evaluation batches, both cut to their longest row.

Rows are stored padded to `max_seq_length`, but most GLUE sentences are far shorter, so each
batch is cut to its longest row rounded up to `pad_to_multiple_of` (16: a handful of shapes
for XLA to compile) unless `static_shapes` is set (TPUs). For BERT-style fine-tuning at 512
this skips most of the padded positions' compute.
"""

from __future__ import annotations

import tensorflow as tf

from albert_tf.finetuning.feature_cache import CachedFeatures
from albert_tf.models.encoder import INPUT_NAMES


def trim_to_longest(batch: dict[str, tf.Tensor], multiple: int) -> dict[str, tf.Tensor]:
    """Cuts the encoder inputs (last axis) to the batch's longest row, rounded up to
    `multiple`; other features are left as they are."""
    width = tf.shape(batch["input_mask"])[-1]
    longest = tf.reduce_max(tf.reduce_sum(batch["input_mask"], axis=-1))
    length = tf.minimum(width, (longest + multiple - 1) // multiple * multiple)
    return {name: value[..., :length] if name in INPUT_NAMES else value
            for name, value in batch.items()}


def training_dataset(features: CachedFeatures, names, batch_size: int, shuffle_buffer: int,
                     seed: int, trim_multiple: int | None, skip_batches: int = 0,
                     input_context: tf.distribute.InputContext | None = None
                     ) -> tf.data.Dataset:
    """Endless shuffled batches of `batch_size` (per replica); the order is a function of
    `seed`, so a resumed run skips `skip_batches` and sees what it would have seen."""
    dataset = features.dataset(names)
    if input_context is not None and input_context.num_input_pipelines > 1:
        dataset = dataset.shard(input_context.num_input_pipelines,
                                input_context.input_pipeline_id)
    dataset = dataset.shuffle(min(shuffle_buffer, max(1, features.count)), seed=seed,
                              reshuffle_each_iteration=True).repeat()
    dataset = dataset.batch(batch_size, drop_remainder=True)
    if trim_multiple:
        dataset = dataset.map(lambda batch: trim_to_longest(batch, trim_multiple))
    return dataset.skip(skip_batches).prefetch(tf.data.AUTOTUNE)


def evaluation_dataset(features: CachedFeatures, names, batch_size: int,
                       trim_multiple: int | None) -> tf.data.Dataset:
    """All rows in order, in full batches: the last one is filled with all-zero rows (their
    predictions are dropped by the caller, who knows `features.count`)."""
    dataset = features.dataset(names)
    filler = (-features.count) % batch_size
    if filler:
        zeros = tf.data.Dataset.from_tensors(
            tf.nest.map_structure(lambda spec: tf.zeros(spec.shape, spec.dtype),
                                  dataset.element_spec)).repeat(filler)
        dataset = dataset.concatenate(zeros)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    if trim_multiple:
        dataset = dataset.map(lambda batch: trim_to_longest(batch, trim_multiple))
    return dataset.prefetch(tf.data.AUTOTUNE)
