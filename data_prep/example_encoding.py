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

import struct

from albert_tf.data.features import FEATURE_NAMES, PRETRAINING_FEATURES

_LENGTH_DELIMITED = 2
# The order `ExampleEncoder.encode` writes; it must be the spec's (checked at import).
_ENCODED_ORDER = ("input_ids", "input_mask", "segment_ids", "token_boundary",
                  "masked_lm_positions", "masked_lm_ids", "masked_lm_weights",
                  "next_sentence_labels")
if _ENCODED_ORDER != FEATURE_NAMES:
    raise ImportError("example_encoding is out of step with albert_tf.data.features")


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
        self._names = {feature.name: _field(1, feature.name.encode()) for feature in
                       PRETRAINING_FEATURES}
        self._one = struct.pack("<f", 1.0)
        self._zero = struct.pack("<f", 0.0)

    def _int64_entry(self, name: str, packed: bytes) -> bytes:
        int64_list = _field(1, packed)
        feature = _field(3, int64_list)
        return _field(1, self._names[name] + _field(2, feature))

    def _float_entry(self, name: str, packed: bytes) -> bytes:
        feature = _field(2, _field(1, packed))
        return _field(1, self._names[name] + _field(2, feature))

    def encode(self, input_ids: list[int], segment_ids: list[int], token_boundary: list[int],
               masked_positions: list[int], masked_ids: list[int], sentence_label: int) -> bytes:
        """Pads the lists to their fixed lengths and returns the serialized Example.

        `input_ids`, `segment_ids` and `token_boundary` have the unpadded length T; the mask is
        1 for those T positions. The masked lists have one entry per prediction.
        """
        padding = self.max_seq_length - len(input_ids)
        unused = self.max_predictions - len(masked_positions)
        if padding < 0 or unused < 0:
            raise ValueError(f"example too long: {len(input_ids)} tokens (max "
                             f"{self.max_seq_length}), {len(masked_positions)} predictions "
                             f"(max {self.max_predictions})")
        table = self._varints
        pad = b"\x00" * padding
        pad_predictions = b"\x00" * unused
        entries = [
            self._int64_entry("input_ids", b"".join(map(table.__getitem__, input_ids)) + pad),
            self._int64_entry("input_mask", b"\x01" * len(input_ids) + pad),
            self._int64_entry("segment_ids", bytes(segment_ids) + pad),
            self._int64_entry("token_boundary", bytes(token_boundary) + pad),
            self._int64_entry("masked_lm_positions",
                              b"".join(map(table.__getitem__, masked_positions)) + pad_predictions),
            self._int64_entry("masked_lm_ids",
                              b"".join(map(table.__getitem__, masked_ids)) + pad_predictions),
            self._float_entry("masked_lm_weights",
                              self._one * len(masked_positions) + self._zero * unused),
            self._int64_entry("next_sentence_labels", table[sentence_label]),
        ]
        return _field(1, b"".join(entries))
