"""Dynamic re-masking: fresh n-gram masks each time a batch is read (RoBERTa, Liu et al. 2019,
section 4.1), with the recipe of `albert_tf.text.masking` so static and dynamic masks agree.

A batch read from the shards is put back as it was before masking (the original ids of
`masked_lm_ids` scattered into `input_word_ids` at `masked_lm_positions`), then masked again by
`albert_tf.text.masking.TokenMasker` with the config's `masking` recipe, with word starts taken
from the records' `token_boundary`.
The random generator of a batch is seeded from (seed, input_pipeline_id, batch index), so a
run resumed with `start_batch` draws the masks the uninterrupted run would have drawn.

The masking runs in numpy through `tf.numpy_function`, on the host: a dataset using it cannot
be sent to the tf.data service or compiled with XLA. Input pipelines run on the host anyway.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from albert_tf.text.masking import TokenMasker
from albert_tf.text.statistics import ExampleStatistics
from albert_tf.text.vocabulary import MASK_ID, Vocabulary

FIRST_ORDINARY_ID = MASK_ID + 1  # ids 0-4 are <pad>, <unk>, [CLS], [SEP], [MASK]
REMASKED = ("input_word_ids", "masked_lm_positions", "masked_lm_ids", "masked_lm_weights")


def batch_generator(seed: int, input_pipeline_id: int, batch_index: int) -> np.random.Generator:
    """The generator of one batch's masks: a pure function of its three arguments."""
    return np.random.default_rng([seed % 2**64, input_pipeline_id, batch_index])


def restore_original_ids(input_ids: np.ndarray, positions: np.ndarray, original_ids: np.ndarray,
                         weights: np.ndarray) -> np.ndarray:
    """Unmasked ids (batch, max_seq_length): `original_ids` (batch, max_predictions) written
    back at `positions` where `weights > 0` (padding predictions are left alone)."""
    restored = np.array(input_ids, copy=True)
    rows, slots = np.nonzero(weights > 0)
    restored[rows, positions[rows, slots]] = original_ids[rows, slots]
    return restored


class BatchRemasker:
    """Re-masks decoded batches (dicts of the model's inputs plus `token_boundary`).

    Args:
        config: a `PretrainingDataConfig` with its `masking` recipe and `vocab_size` (its
            prediction slots: `dynamic_predictions_per_seq` when set, else the shards').
        input_pipeline_id: mixed into every batch's seed, so replicas draw different masks.
        seed: the base seed (the config's, or one drawn per dataset when it has none).
    """

    def __init__(self, config, input_pipeline_id: int, seed: int):
        vocab_size = config.vocab_size
        # Word starts come from the records' token_boundary, so the vocabulary's table is
        # never read; only the ids a random replacement may take matter.
        vocabulary = Vocabulary(vocab_size, b"\x01" * vocab_size,
                                np.arange(FIRST_ORDINARY_ID, vocab_size, dtype=np.int64))
        self.slots = config.predictions_per_seq
        self.masker = TokenMasker(config.masking, config.max_seq_length, self.slots,
                                  vocabulary)
        self.input_pipeline_id = input_pipeline_id
        self.seed = seed

    def remask_numpy(self, batch_index, input_ids, input_mask, segment_ids, token_boundary,
                     positions, original_ids, weights):
        """numpy in, numpy out: (ids (batch, seq), positions, original ids, weights (batch, P))."""
        tokens = restore_original_ids(input_ids, positions, original_ids, weights)
        lengths = input_mask.sum(axis=1).astype(np.int64)
        columns = np.arange(tokens.shape[1])[None, :]
        # Segment 0 runs through the first [SEP].
        separators = ((segment_ids == 0) & (columns < lengths[:, None])).sum(axis=1) - 1
        rng = batch_generator(self.seed, self.input_pipeline_id, int(batch_index))
        masked = self.masker.mask_tokens(tokens, lengths, separators, rng, ExampleStatistics(),
                                         boundary=token_boundary)
        slots = np.arange(self.slots)[None, :]
        weights = (slots < masked.num_predictions[:, None]).astype(np.float32)
        return (masked.input_ids.astype(np.int32), masked.positions.astype(np.int32),
                masked.original_ids.astype(np.int32), weights)

    def __call__(self, batch_index: tf.Tensor, features: dict[str, tf.Tensor]) -> dict:
        """Batch `batch_index` of decoded features -> the same keys and dtypes, with
        `input_word_ids` and the `masked_lm_*` features drawn afresh (`token_boundary`
        dropped); the `masked_lm_*` features have this remasker's prediction slots.
        """
        features = dict(features)
        boundary = features.pop("token_boundary")
        inputs = [batch_index, features["input_word_ids"], features["input_mask"],
                  features["input_type_ids"], boundary, features["masked_lm_positions"],
                  features["masked_lm_ids"], features["masked_lm_weights"]]
        outputs = tf.numpy_function(self.remask_numpy, inputs,
                                    [tf.int32, tf.int32, tf.int32, tf.float32],
                                    stateful=False, name="dynamic_masking")
        for name, output in zip(REMASKED, outputs):
            shape = features[name].shape
            output.set_shape(shape if name == "input_word_ids" else shape[:1].concatenate(
                [self.slots]))
            features[name] = output
        return features
