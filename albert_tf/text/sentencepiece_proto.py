"""An edit of a serialized SentencePiece `ModelProto`, made on the protobuf wire format.

The `sentencepiece_model_pb2` module that ships with sentencepiece is generated for a newer
protobuf runtime than TensorFlow 2.20 pins, so it cannot be imported next to TensorFlow. The
edit needed here does not need it: when a message field occurs twice in the wire bytes, a
parser merges the two, and for a scalar field inside it the last value wins.
"""

from __future__ import annotations

_NORMALIZER_SPEC = 3  # ModelProto.normalizer_spec, a message
_ADD_DUMMY_PREFIX = 3  # NormalizerSpec.add_dummy_prefix, a bool
_VARINT, _LENGTH_DELIMITED = 0, 2


def without_dummy_prefix(model_proto: bytes) -> bytes:
    """The same model with `add_dummy_prefix` off, so text is encoded as the continuation of a
    word ("able" -> "able", not "▁able").

    >>> without_dummy_prefix(b"") == bytes([3 << 3 | 2, 2, 3 << 3 | 0, 0])
    True
    """
    spec = bytes([_ADD_DUMMY_PREFIX << 3 | _VARINT, 0])  # add_dummy_prefix: false
    return model_proto + bytes([_NORMALIZER_SPEC << 3 | _LENGTH_DELIMITED, len(spec)]) + spec
