"""AlbertInputPacker: one or two tokenized segments -> padded encoder inputs, in the graph."""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text
import tf_keras

from albert_tf.text.vocabulary import CLS_ID, PAD_ID, SEP_ID


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class AlbertInputPacker(tf_keras.layers.Layer):
    """Truncates and packs segments as `[CLS] a [SEP]` or `[CLS] a [SEP] b [SEP]`.

    Truncation is the original `run_classifier.py` rule (`_truncate_seq_pair`: drop the last
    piece of the longer segment until the pair fits), which is what tensorflow-text's
    `RoundRobinTrimmer` computes; packing concatenates ragged rows. As in the original, an
    empty second segment is no segment: its row packs as a single text, without a second
    [SEP].

    The batch is padded to its longest row (rounded up to `pad_to_multiple_of`, at most
    `max_seq_length`), not always to `max_seq_length`: short requests cost less.

    Args:
        max_seq_length: the most positions a packed row may have ([CLS] and [SEP]s included).
        pad_to_multiple_of: round the padded length up to a multiple of this, to bound the
            number of distinct shapes an XLA-compiled model sees.

    Call: a list of one or two int `tf.RaggedTensor` `(batch_size, (pieces))` -> dict of int32
    `(batch_size, seq_length)`: `input_word_ids`, `input_mask`, `input_type_ids`.
    """

    def __init__(self, max_seq_length: int, pad_to_multiple_of: int = 1, **kwargs):
        kwargs["trainable"] = False
        super().__init__(**kwargs)
        if max_seq_length < 3:
            raise ValueError(f"max_seq_length must be at least 3 ([CLS] x [SEP]), got "
                             f"{max_seq_length}")
        if pad_to_multiple_of < 1:
            raise ValueError(f"pad_to_multiple_of must be positive, got {pad_to_multiple_of}")
        self.max_seq_length = max_seq_length
        self.pad_to_multiple_of = pad_to_multiple_of

    def call(self, segments: list[tf.RaggedTensor]) -> dict[str, tf.Tensor]:
        return pack_segments(segments, self.max_seq_length, self.pad_to_multiple_of)

    def get_config(self):
        return {**super().get_config(), "max_seq_length": self.max_seq_length,
                "pad_to_multiple_of": self.pad_to_multiple_of}


def pack_segments(segments: list[tf.RaggedTensor], max_seq_length, pad_to_multiple_of: int = 1,
                  fixed_length: bool = False) -> dict[str, tf.Tensor]:
    """`AlbertInputPacker`'s packing, with the length as a value that may be a scalar tensor.

    Args:
        segments: one or two int `tf.RaggedTensor` `(batch_size, (pieces))`.
        max_seq_length: int or int32 scalar tensor, the most positions a packed row may have.
        pad_to_multiple_of: see `AlbertInputPacker`.
        fixed_length: pad every batch to `max_seq_length` (the TF Hub convention), not to
            its longest row.
    """
    if len(segments) not in (1, 2):
        raise ValueError(f"AlbertInputPacker packs 1 or 2 segments, got {len(segments)}")
    first = tf.cast(segments[0], tf.int32)
    every_row = tf.ones_like(first.row_lengths(), tf.bool)
    if len(segments) == 1:
        first, = tf_text.RoundRobinTrimmer(max_seq_length - 2).trim([first])
        second = first[:, :0]
        second_sep = column(SEP_ID, ~every_row)
    else:
        second = tf.cast(segments[1], tf.int32)
        # The trimmer takes one budget for the whole batch, so a pair's closing [SEP] is
        # trimmed as a segment too, placed first: it always gets its slot, and round robin
        # then shares the rest between a and b as the original does. A b trimmed to
        # nothing leaves a single text, as in the original.
        _, first, second = tf_text.RoundRobinTrimmer(max_seq_length - 2).trim(
            [column(SEP_ID, second.row_lengths() > 0), first, second])
        second_sep = column(SEP_ID, second.row_lengths() > 0)
    head = tf.concat([column(CLS_ID, every_row), first, column(SEP_ID, every_row)], axis=1)
    tail = tf.concat([second, second_sep], axis=1)
    word_ids = tf.concat([head, tail], axis=1)
    type_ids = tf.concat([tf.zeros_like(head), tf.ones_like(tail)], axis=1)
    longest = tf.reduce_max(tf.concat([word_ids.row_lengths(), [2]], axis=0))
    limit = tf.cast(max_seq_length, longest.dtype)
    multiple = tf.constant(pad_to_multiple_of, longest.dtype)
    length = limit if fixed_length else tf.minimum(
        (longest + multiple - 1) // multiple * multiple, limit)
    word_ids, mask = tf_text.pad_model_inputs(word_ids, length, pad_value=PAD_ID)
    type_ids, _ = tf_text.pad_model_inputs(type_ids, length)
    return {"input_word_ids": tf.cast(word_ids, tf.int32),
            "input_mask": tf.cast(mask, tf.int32),
            "input_type_ids": tf.cast(type_ids, tf.int32)}


def column(value: int, present: tf.Tensor) -> tf.RaggedTensor:
    """A ragged `(batch_size, (0 or 1))` holding `value` in the rows where `present` is true."""
    lengths = tf.cast(present, tf.int64)
    return tf.RaggedTensor.from_row_lengths(
        tf.fill([tf.reduce_sum(lengths)], tf.constant(value, tf.int32)), lengths)
