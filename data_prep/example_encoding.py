"""Serialized `tf.train.Example` protos for pretraining examples, without TensorFlow.

Building `tf.train.Example` objects costs tens of microseconds per example and needs
TensorFlow in every worker. The wire format of this one message shape is small, so we write it
directly: an Example holds Features (field 1), whose `feature` map has one entry (field 1) per
feature with the name (field 1) and a Feature (field 2) holding an Int64List (field 3) or a
FloatList (field 2) of packed values (field 1). The varints of a whole batch are computed with
numpy, and entry headers are memoized by payload size, so Python only joins byte strings per
example. Features come in the order of `albert_tf.records.features`, so the bytes are a pure
function of the example. `tests/albert_tf/text/test_data_records.py` checks the bytes
against TensorFlow's own parser and protobuf classes.
"""

from __future__ import annotations

import numpy as np

from albert_tf.records.features import FEATURE_NAMES, PRETRAINING_FEATURES

_LENGTH_DELIMITED = 2
# The order `ExampleEncoder.encode_batch` writes; it must be the spec's (checked at import).
_ENCODED_ORDER = ("input_ids", "input_mask", "segment_ids", "token_boundary",
                  "masked_lm_positions", "masked_lm_ids", "masked_lm_weights",
                  "next_sentence_labels")
if _ENCODED_ORDER != FEATURE_NAMES:
    raise ImportError("example_encoding is out of step with albert_tf.records.features")


def varint(value: int) -> bytes:
    """Protobuf base-128 varint of a non-negative integer.

    >>> varint(1), varint(300)
    (b'\\x01', b'\\xac\\x02')
    """
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field: tag, length, payload."""
    return _tag(number) + varint(len(payload)) + payload


def varint_rows(matrix: np.ndarray) -> tuple[bytes, list[int]]:
    """Varint bytes of a non-negative integer matrix, row after row, and row byte offsets.

    >>> data, offsets = varint_rows(np.array([[1, 300], [0, 5]]))
    >>> data, offsets
    (b'\\x01\\xac\\x02\\x00\\x05', [0, 3, 5])
    """
    values = np.asarray(matrix, dtype=np.uint64)
    top = int(values.max()) if values.size else 0
    groups = max(1, (top.bit_length() + 6) // 7)
    sizes = np.ones(values.shape, np.int64)
    for group in range(1, groups):
        sizes += values >= np.uint64(1 << (7 * group))
    parts = np.empty(values.shape + (groups,), np.uint8)
    for group in range(groups):
        low_bits = (values >> np.uint64(7 * group)) & np.uint64(0x7F)
        parts[..., group] = low_bits | ((sizes > group + 1) << 7).astype(np.uint64)
    data = parts[np.arange(groups) < sizes[..., None]].tobytes()  # keeps row-major order
    offsets = np.concatenate([[0], np.cumsum(sizes.sum(axis=1))]).tolist()
    return data, offsets


class ExampleEncoder:
    """Encodes batches of pretraining examples to tf.train.Example bytes.

    Args:
        max_seq_length, max_predictions: the fixed feature lengths.
    """

    def __init__(self, max_seq_length: int, max_predictions: int):
        self.max_seq_length = max_seq_length
        self.max_predictions = max_predictions
        self._kinds = {feature.name: feature.dtype for feature in PRETRAINING_FEATURES}
        self._prefixes: dict[tuple[str, int], bytes] = {}
        # Features whose packed size never changes: 0/1 values (one byte each), the float
        # weights and the 0/1 sentence label.
        fixed_sizes = {"input_mask": max_seq_length, "segment_ids": max_seq_length,
                       "token_boundary": max_seq_length, "masked_lm_weights": 4 * max_predictions,
                       "next_sentence_labels": 1}
        self._fixed_prefixes = {name: self._entry(name, b"\x00" * size)[:-size]
                                for name, size in fixed_sizes.items()}

    def _entry(self, name: str, packed: bytes) -> bytes:
        """The map entry of feature `name` holding `packed` values (headers memoized by size)."""
        key = (name, len(packed))
        prefix = self._prefixes.get(key)
        if prefix is None:
            list_field = 3 if self._kinds[name] == "int64" else 2  # Int64List / FloatList
            prefix = _entry_prefix(name, list_field, len(packed))
            self._prefixes[key] = prefix
        return prefix + packed

    def encode_batch(self, input_ids: np.ndarray, lengths: np.ndarray, segment_ids: np.ndarray,
                     token_boundary: np.ndarray, positions: np.ndarray, original_ids: np.ndarray,
                     num_predictions: np.ndarray, labels: np.ndarray) -> list[bytes]:
        """Serialized Examples of a batch.

        Args:
            input_ids, segment_ids, token_boundary: (batch, max_seq_length), zero past each
                example's length; the last two hold 0/1.
            lengths: (batch,) tokens of each example (the mask is 1 there).
            positions, original_ids: (batch, max_predictions), zero past num_predictions.
            num_predictions, labels: (batch,).
        """
        batch, width = input_ids.shape
        if width != self.max_seq_length or positions.shape[1] != self.max_predictions:
            raise ValueError(f"batch of shape {input_ids.shape}/{positions.shape}; expected "
                             f"width {self.max_seq_length} and {self.max_predictions} predictions")
        ids, id_offsets = varint_rows(input_ids)
        where, where_offsets = varint_rows(positions)
        what, what_offsets = varint_rows(original_ids)
        sequence = np.arange(width)[None, :] < np.asarray(lengths)[:, None]
        masks = sequence.astype(np.uint8).tobytes()
        segments = np.ascontiguousarray(segment_ids, np.uint8).tobytes()
        boundaries = np.ascontiguousarray(token_boundary, np.uint8).tobytes()
        weights = (np.arange(self.max_predictions)[None, :] < np.asarray(num_predictions)[:, None]
                   ).astype("<f4").tobytes()
        label_bytes = np.asarray(labels, np.uint8).tobytes()
        entry, fixed = self._entry, self._fixed_prefixes
        weight_size = 4 * self.max_predictions
        records = []
        for row in range(batch):
            cut, weight_cut = slice(row * width, (row + 1) * width), \
                slice(row * weight_size, (row + 1) * weight_size)
            features = b"".join((
                entry("input_ids", ids[id_offsets[row]:id_offsets[row + 1]]),
                fixed["input_mask"], masks[cut],
                fixed["segment_ids"], segments[cut],
                fixed["token_boundary"], boundaries[cut],
                entry("masked_lm_positions", where[where_offsets[row]:where_offsets[row + 1]]),
                entry("masked_lm_ids", what[what_offsets[row]:what_offsets[row + 1]]),
                fixed["masked_lm_weights"], weights[weight_cut],
                fixed["next_sentence_labels"], label_bytes[row:row + 1],
            ))
            records.append(_tag(1) + varint(len(features)) + features)
        return records


def _tag(number: int) -> bytes:
    return varint(number << 3 | _LENGTH_DELIMITED)


def _entry_prefix(name: str, list_field: int, packed_length: int) -> bytes:
    """The bytes of a `feature` map entry that come before its packed values.

    entry = {key: name, value: Feature{list_field: List{value: packed}}}, each level a tag and
    the length of what follows.
    """
    list_head = _tag(1) + varint(packed_length)
    list_length = len(list_head) + packed_length
    feature_head = _tag(list_field) + varint(list_length) + list_head
    feature_length = len(feature_head) + packed_length
    value_head = _tag(2) + varint(feature_length) + feature_head
    key = _field(1, name.encode())
    return _tag(1) + varint(len(key) + len(value_head) + packed_length) + key + value_head
