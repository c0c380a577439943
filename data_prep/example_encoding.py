"""Serialized `tf.train.Example` protos for pretraining examples, without TensorFlow.

Building `tf.train.Example` objects costs tens of microseconds per example and needs
TensorFlow in every worker. The wire format of this one message shape is small, so we write it
directly: an Example holds Features (field 1), whose `feature` map has one entry (field 1) per
feature with the name (field 1) and a Feature (field 2) holding an Int64List (field 3) or a
FloatList (field 2) of packed values (field 1). Varint bytes of every id are looked up from a
table made once. Features come in the order of `albert_tf.data.features`, so the bytes are a
pure function of the example. `tests/test_example_encoding.py` checks the bytes against
TensorFlow's own parser and protobuf classes.
"""

from __future__ import annotations

import operator
import struct

from albert_tf.data.features import FEATURE_NAMES, PRETRAINING_FEATURES

_LENGTH_DELIMITED = 2
# The order `ExampleEncoder.encode` writes; it must be the spec's (checked at import).
_ENCODED_ORDER = ("input_ids", "input_mask", "segment_ids", "token_boundary",
                  "masked_lm_positions", "masked_lm_ids", "masked_lm_weights",
                  "next_sentence_labels")
if _ENCODED_ORDER != FEATURE_NAMES:
    raise ImportError("example_encoding is out of step with albert_tf.data.features")


def gather(table, indices) -> tuple:
    """`table[i]` for each i, as a tuple; `operator.itemgetter` does it in C, 2-3x faster than
    a map or a comprehension, which matters at 128-512 lookups per example.

    >>> gather(b"abc", [2, 0]), gather([5, 6], [1]), gather([5], [])
    ((99, 97), (6,), ())
    """
    if len(indices) > 1:
        return operator.itemgetter(*indices)(table)
    return tuple(table[index] for index in indices)


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
    return varint(number << 3 | _LENGTH_DELIMITED) + varint(len(payload)) + payload


class ExampleEncoder:
    """Encodes one pretraining example to tf.train.Example bytes.

    Args:
        vocab_size: ids are below this (sizes the varint table).
        max_seq_length, max_predictions: the fixed feature lengths.
    """

    def __init__(self, vocab_size: int, max_seq_length: int, max_predictions: int):
        self.max_seq_length = max_seq_length
        self.max_predictions = max_predictions
        self._varints = [varint(value) for value in range(max(vocab_size, max_seq_length))]
        self._kinds = {feature.name: feature.dtype for feature in PRETRAINING_FEATURES}
        self._prefixes: dict[tuple[str, int], bytes] = {}
        # Features whose packed size never changes: 0/1 values (one byte each), the float
        # weights and the 0/1 sentence label.
        fixed_sizes = {"input_mask": max_seq_length, "segment_ids": max_seq_length,
                       "token_boundary": max_seq_length, "masked_lm_weights": 4 * max_predictions,
                       "next_sentence_labels": 1}
        self._fixed_prefixes = {name: self._entry(name, b"\x00" * size)[:-size]
                                for name, size in fixed_sizes.items()}
        self._one = struct.pack("<f", 1.0)
        self._zero = struct.pack("<f", 0.0)

    def _entry(self, name: str, packed: bytes) -> bytes:
        """The map entry of feature `name` holding `packed` values (headers memoized by size)."""
        key = (name, len(packed))
        prefix = self._prefixes.get(key)
        if prefix is None:
            list_field = 3 if self._kinds[name] == "int64" else 2  # Int64List / FloatList
            prefix = _entry_prefix(name, list_field, len(packed))
            self._prefixes[key] = prefix
        return prefix + packed

    def encode(self, input_ids: list[int], segment_ids: bytes, token_boundary: bytes,
               masked_positions: list[int], masked_ids: list[int], sentence_label: int) -> bytes:
        """Pads the features to their fixed lengths and returns the serialized Example.

        `input_ids` has the unpadded length T; `segment_ids` and `token_boundary` are T bytes
        of 0 or 1 (a 0/1 varint is that byte); the mask is 1 for those T positions. The masked
        lists have one entry per prediction.
        """
        length, predictions = len(input_ids), len(masked_positions)
        padding = self.max_seq_length - length
        unused = self.max_predictions - predictions
        if padding < 0 or unused < 0:
            raise ValueError(f"example too long: {length} tokens (max {self.max_seq_length}), "
                             f"{predictions} predictions (max {self.max_predictions})")
        table = self._varints
        pad = b"\x00" * padding
        pad_predictions = b"\x00" * unused
        entry, fixed = self._entry, self._fixed_prefixes
        features = b"".join((
            entry("input_ids", b"".join(gather(table, input_ids)) + pad),
            fixed["input_mask"], b"\x01" * length, pad,
            fixed["segment_ids"], segment_ids, pad,
            fixed["token_boundary"], token_boundary, pad,
            entry("masked_lm_positions",
                  b"".join(gather(table, masked_positions)) + pad_predictions),
            entry("masked_lm_ids", b"".join(gather(table, masked_ids)) + pad_predictions),
            fixed["masked_lm_weights"], self._one * predictions, self._zero * unused,
            fixed["next_sentence_labels"], table[sentence_label],
        ))
        return _tag(1) + varint(len(features)) + features


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
