"""`[CLS] A [SEP] B [SEP]` rows gathered from one array of piece ids.

The data-prep workers hold a shard's documents as one int32 array, and a segment pair as
two ranges of it (`data_prep.instances`); the masker (`albert_tf.text.masking`) takes
padded rows. `pair_rows` makes the one from the other for a whole batch in one numpy
gather.
"""

from __future__ import annotations

import numpy as np

from albert_tf.text.vocabulary import CLS_ID, SEP_ID


def with_specials(ids: np.ndarray, max_seq_length: int) -> np.ndarray:
    """`ids`, then [CLS], [SEP] and max_seq_length + 1 zeros: what `pair_rows` gathers from."""
    return np.concatenate([np.asarray(ids, np.int32), np.array([CLS_ID, SEP_ID], np.int32),
                           np.zeros(max_seq_length + 1, np.int32)])


def pair_rows(source: np.ndarray, ranges: np.ndarray, max_seq_length: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`[CLS] A [SEP] B [SEP]` of each pair: the (pairs, max_seq_length) int32 ids, zeros
    after the end, the lengths and the first [SEP]'s column (both int64).

    Args:
        source: `with_specials(ids, max_seq_length)`.
        ranges: (pairs, 4) int64: A's start and length in `ids`, then B's; A and B together
            hold at most max_seq_length - 3 pieces.

    A row is six runs of consecutive entries of `source`: [CLS], A, [SEP], B, [SEP], then
    zeros (in one spare column at least). So the index of every entry is a cumulative sum of
    ones, with a jump where each run starts: one numpy pass for the whole batch, then one
    gather.

    >>> source = with_specials(np.array([7, 8, 9]), 8)
    >>> rows, lengths, separators = pair_rows(source, np.array([[0, 2, 2, 1]]), 8)
    >>> rows.tolist(), lengths.tolist(), separators.tolist()
    ([[2, 7, 8, 3, 9, 3, 0, 0]], [6], [3])
    """
    first_starts, first_lengths, second_starts, second_lengths = np.asarray(ranges).T
    count = len(first_starts)
    lengths, separators = first_lengths + second_lengths + 3, first_lengths + 1
    cls = len(source) - max_seq_length - 3
    sep, pad = cls + 1, cls + 2
    width = max_seq_length + 1
    row_starts = np.arange(count)[:, None] * width
    columns = np.stack(np.broadcast_arrays(0, 1, separators, separators + 1, lengths - 1,
                                           lengths), axis=1)
    positions = (row_starts + columns).ravel()
    starts = np.stack(np.broadcast_arrays(cls, first_starts, sep, second_starts, sep, pad),
                      axis=1).ravel()
    steps = np.ones(count * width, np.int64)
    steps[positions[1:]] = np.diff(starts) - np.diff(positions) + 1
    steps[0] = starts[0]
    index = np.cumsum(steps).reshape(count, width)[:, :max_seq_length]
    return source[index], lengths, separators
