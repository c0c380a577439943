"""The pretraining TFRecord features, defined once for the writer and the reader.

The names, dtypes and lengths are those of the original ALBERT `create_pretraining_data.py`,
so files written by either side can be read by the other:

| feature | dtype | length | holds |
|---|---|---|---|
| `input_ids` | int64 | max_seq_length | `[CLS] A [SEP] B [SEP]` piece ids, 0-padded, masked |
| `input_mask` | int64 | max_seq_length | 1 for real tokens, 0 for padding |
| `segment_ids` | int64 | max_seq_length | 0 through the first `[SEP]`, 1 after |
| `token_boundary` | int64 | max_seq_length | 1 where a piece starts a word, [CLS], [SEP] |
| `masked_lm_positions` | int64 | max_predictions | positions of the masked pieces, 0-padded |
| `masked_lm_ids` | int64 | max_predictions | original ids at those positions |
| `masked_lm_weights` | float32 | max_predictions | 1.0 for a real prediction, 0.0 for padding |
| `next_sentence_labels` | int64 | 1 | 0 in order / next; 1 swapped (SOP) / random (NSP) |

Nothing here imports TensorFlow; `tf_parse_spec` does so when called.
"""

from __future__ import annotations

import dataclasses
from typing import Any

# The file `albert-data build` writes beside finished shards (build options, tokenizer,
# counts): what readers check the shards against.
MANIFEST = "manifest.json"

SEQUENCE = "sequence"
PREDICTIONS = "predictions"
SINGLE = "single"


@dataclasses.dataclass(frozen=True)
class Feature:
    """One TFRecord feature: its name, `int64` or `float32`, and which length it has."""

    name: str
    dtype: str
    length: str  # SEQUENCE, PREDICTIONS or SINGLE

    def size(self, max_seq_length: int, max_predictions: int) -> int:
        return {SEQUENCE: max_seq_length, PREDICTIONS: max_predictions, SINGLE: 1}[self.length]


PRETRAINING_FEATURES: tuple[Feature, ...] = (
    Feature("input_ids", "int64", SEQUENCE),
    Feature("input_mask", "int64", SEQUENCE),
    Feature("segment_ids", "int64", SEQUENCE),
    Feature("token_boundary", "int64", SEQUENCE),
    Feature("masked_lm_positions", "int64", PREDICTIONS),
    Feature("masked_lm_ids", "int64", PREDICTIONS),
    Feature("masked_lm_weights", "float32", PREDICTIONS),
    Feature("next_sentence_labels", "int64", SINGLE),
)
FEATURE_NAMES = tuple(feature.name for feature in PRETRAINING_FEATURES)

# How the model's inputs are named (Model Garden convention, see albert_tf.models.encoder).
MODEL_INPUT_NAMES = {
    "input_ids": "input_word_ids",
    "input_mask": "input_mask",
    "segment_ids": "input_type_ids",
    "masked_lm_positions": "masked_lm_positions",
    "masked_lm_ids": "masked_lm_ids",
    "masked_lm_weights": "masked_lm_weights",
    "next_sentence_labels": "next_sentence_labels",
}


def tf_parse_spec(max_seq_length: int, max_predictions: int) -> dict[str, Any]:
    """`tf.io.parse_example` spec of the pretraining features (all fixed length)."""
    import tensorflow as tf

    dtypes = {"int64": tf.int64, "float32": tf.float32}
    return {
        feature.name: tf.io.FixedLenFeature(
            [feature.size(max_seq_length, max_predictions)], dtypes[feature.dtype])
        for feature in PRETRAINING_FEATURES
    }


def decode_record(serialized, max_seq_length: int, max_predictions: int,
                  with_token_boundary: bool = False) -> dict:
    """One serialized example (or a batch of them) -> dict of int32/float32 tensors.

    Keys are the model's input names; shapes (max_seq_length,) for the sequence features,
    (max_predictions,) for the masked-LM ones and (1,) for `next_sentence_labels`, with a
    leading (batch_size,) for a batch. `token_boundary` (max_seq_length,) is kept only when
    asked for (dynamic masking reads it; the model does not).
    """
    import tensorflow as tf

    spec = tf_parse_spec(max_seq_length, max_predictions)
    if serialized.shape.rank == 0:
        parsed = tf.io.parse_single_example(serialized, spec)
    else:
        parsed = tf.io.parse_example(serialized, spec)
    names = dict(MODEL_INPUT_NAMES, **({"token_boundary": "token_boundary"}
                                        if with_token_boundary else {}))
    features = {}
    for name, tensor in parsed.items():
        if name not in names:
            continue  # token_boundary: kept in the files for compatibility
        if tensor.dtype == tf.int64:
            tensor = tf.cast(tensor, tf.int32)
        features[names[name]] = tensor
    return features
