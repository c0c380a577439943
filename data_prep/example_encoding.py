"""Serialized `tf.train.Example` protos for pretraining examples, without TensorFlow.

Building `tf.train.Example` objects costs tens of microseconds per example and needs
TensorFlow in every worker. The wire format of this one message shape is small, so we write it
directly: an Example holds Features (field 1), whose `feature` map has one entry (field 1) per
feature with the name (field 1) and a Feature (field 2) holding an Int64List (field 3) or a
FloatList (field 2) of packed values (field 1). A whole batch is encoded with numpy: the
records are laid side by side in a byte matrix, one row each, and the real bytes kept in one
pass (`ExampleEncoder`); Python only cuts the result into records. Features come in the order
of `albert_tf.records.features`, so the bytes are a pure function of the example.
`tests/albert_tf/records/test_data_records.py` checks the bytes against TensorFlow's own parser
and protobuf classes.
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
_VARINT_FEATURES = ("input_ids", "masked_lm_positions", "masked_lm_ids")  # sizes vary


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


def varint_bytes(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Varint bytes of a non-negative integer matrix laid out in fixed slots, and which are real.

    Each value gets as many byte slots as the largest value needs; returns
    `(slots, real)`, both (rows, columns * slots per value): `slots` uint8, `real` bool, True on
    the bytes the value's varint has (its first ones). `slots[real]` is the varints of the
    matrix, row after row.

    >>> slots, real = varint_bytes(np.array([[1, 300]]))
    >>> slots[real].tobytes()
    b'\\x01\\xac\\x02'
    """
    values = np.asarray(matrix)
    top = int(values.max()) if values.size else 0
    groups = max(1, (top.bit_length() + 6) // 7)
    values = values.astype(np.uint32 if top < 2**32 else np.uint64, copy=False)
    slots = np.empty(values.shape + (groups,), np.uint8)
    real = np.empty(values.shape + (groups,), bool)
    real[..., 0] = True
    for group in range(groups):
        shifted = values >> values.dtype.type(7 * group) if group else values
        slots[..., group] = shifted & 0x7F
        if group + 1 < groups:
            more = real[..., group + 1]
            np.greater_equal(shifted, 0x80, out=more)  # another byte follows
            slots[..., group] |= more.view(np.uint8) << 7
    rows, columns = values.shape
    return slots.reshape(rows, columns * groups), real.reshape(rows, columns * groups)


class _EntryPrefixes:
    """The bytes before the packed values of one feature's map entry, by packed size, as a
    table (size -> left-aligned bytes and their count), grown as larger sizes come."""

    def __init__(self, name: str, list_field: int):
        self.name, self.list_field = name, list_field
        self.table = np.zeros((0, 0), np.uint8)
        self.real = np.zeros((0, 0), bool)
        self.sizes = np.zeros(0, np.int64)

    def rows(self, packed_sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each packed size: the prefix slots, which are real (both (n, widest)), the
        prefix length."""
        top = int(packed_sizes.max()) if packed_sizes.size else 0
        if top >= len(self.sizes):
            prefixes = [_entry_prefix(self.name, self.list_field, size)
                        for size in range(max(2 * top, 64))]
            widest = max(map(len, prefixes))
            self.table = np.zeros((len(prefixes), widest), np.uint8)
            for size, prefix in enumerate(prefixes):
                self.table[size, :len(prefix)] = np.frombuffer(prefix, np.uint8)
            self.sizes = np.fromiter(map(len, prefixes), np.int64, len(prefixes))
            self.real = np.arange(widest) < self.sizes[:, None]
        return (np.take(self.table, packed_sizes, axis=0),
                np.take(self.real, packed_sizes, axis=0), np.take(self.sizes, packed_sizes))


class ExampleEncoder:
    """Encodes batches of pretraining examples to tf.train.Example bytes.

    The records of a batch are built side by side: row b of a (batch, slots) byte matrix
    holds record b's parts in order, each part in as many slots as its longest case needs,
    and a boolean matrix of the same shape says which bytes are real; the real bytes, row
    after row, are the records end to end.

    Args:
        max_seq_length, max_predictions: the fixed feature lengths.
    """

    def __init__(self, max_seq_length: int, max_predictions: int):
        self.max_seq_length = max_seq_length
        self.max_predictions = max_predictions
        kinds = {feature.name: feature.dtype for feature in PRETRAINING_FEATURES}
        list_fields = {name: 3 if kind == "int64" else 2  # Int64List / FloatList
                       for name, kind in kinds.items()}
        self._varint_prefixes = {name: _EntryPrefixes(name, list_fields[name])
                                 for name in _VARINT_FEATURES}
        # Features whose packed size never changes: 0/1 values (one byte each), the float
        # weights and the 0/1 sentence label.
        fixed_sizes = {"input_mask": max_seq_length, "segment_ids": max_seq_length,
                       "token_boundary": max_seq_length, "masked_lm_weights": 4 * max_predictions,
                       "next_sentence_labels": 1}
        self._fixed_prefixes = {
            name: np.frombuffer(_entry_prefix(name, list_fields[name], size), np.uint8)
            for name, size in fixed_sizes.items()}
        self._fixed_length = sum(len(prefix) + fixed_sizes[name]
                                 for name, prefix in self._fixed_prefixes.items())

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
        features_length = np.full(batch, self._fixed_length, np.int64)
        entries = {}  # feature name -> its map entry's parts: (bytes, which are real)
        for name, values in zip(_VARINT_FEATURES, (input_ids, positions, original_ids)):
            slots, real = varint_bytes(values)
            packed = real.sum(axis=1)
            prefix, prefix_real, prefix_length = self._varint_prefixes[name].rows(packed)
            features_length += prefix_length + packed
            entries[name] = [(prefix, prefix_real), (slots, real)]
        mask = np.arange(width) < np.asarray(lengths)[:, None]
        weights = (np.arange(self.max_predictions) < np.asarray(num_predictions)[:, None]
                   ).astype("<f4").view(np.uint8)
        fixed_values = {"input_mask": mask.view(np.uint8), "segment_ids": segment_ids,
                        "token_boundary": token_boundary, "masked_lm_weights": weights,
                        "next_sentence_labels": np.asarray(labels)[:, None]}
        for name, prefix in self._fixed_prefixes.items():
            entries[name] = [(np.broadcast_to(prefix, (batch, len(prefix))), None),
                             (fixed_values[name], None)]
        head, head_real = varint_bytes(features_length[:, None])  # the Features' length
        head_part = (np.concatenate([np.full((batch, 1), _tag(1)[0], np.uint8), head], axis=1),
                     np.concatenate([np.ones((batch, 1), bool), head_real], axis=1))
        parts = [head_part, *(part for name in _ENCODED_ORDER for part in entries[name])]
        return _join_rows(parts, 1 + head_real.sum(axis=1) + features_length)


def _join_rows(parts: list[tuple[np.ndarray, np.ndarray | None]],
               record_lengths: np.ndarray) -> list[bytes]:
    """Records from parts laid side by side ((batch, width) bytes, and which are real, None
    for all): each record is its row's real bytes, part after part."""
    batch = len(record_lengths)
    width = sum(values.shape[1] for values, _ in parts)
    slots = np.empty((batch, width), np.uint8)
    real = np.ones((batch, width), bool)
    column = 0
    for values, values_real in parts:
        end = column + values.shape[1]
        slots[:, column:end] = values
        if values_real is not None:
            real[:, column:end] = values_real
        column = end
    data = np.compress(real.ravel(), slots.ravel()).tobytes()
    ends = np.cumsum(record_lengths).tolist()
    return [data[start:end] for start, end in zip([0, *ends[:-1]], ends)]


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
