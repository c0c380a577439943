"""Segments A and B and the sentence label, from a tokenized document (paper section 4.1).

The original recipe, restated: sentences are collected into a chunk until it reaches a target
length (the maximum, or with probability `short_seq_prob` a uniform length in
[2, max_seq_length - 3]) or the document ends; A takes the chunk's first k >= 1 sentences and B
the rest. Then:

- `sop`: A and B are swapped with probability 1/2 (label 1 = swapped);
- `nsp`: with probability 1/2 B is replaced by a run of sentences from another document of
  the shard (label 1 = random), and the chunk's unused sentences are put back;
- `none`: A and B stay in order (label 0).

Two departures from the original code, both fixes:
- A chunk of a single sentence is split inside that sentence instead of drawing B from
  another document; the original does the latter even in SOP mode, so 11% of its "SOP"
  examples are NSP negatives and its labels are 55/45. The cut falls at a word start (a piece
  after a space), uniformly among those that leave each side at least
  min(MIN_SIDE_WORDS, words // 2) words: a cut at a piece inside a word or before a final
  full stop would make a pair whose order a lone piece gives away. One-word chunks are
  skipped.
- The target length is drawn again for every chunk, so about `short_seq_prob` of the examples
  (not of the documents) aim short, as the BERT paper describes the 10%.

A pair longer than max_seq_length - 3 is trimmed one piece at a time from the longer segment,
at its front or its back with probability 1/2 each.
"""

from __future__ import annotations

import dataclasses
import itertools
import random

from albert_tf.text.options import DataPrepOptions
from albert_tf.text.statistics import ExampleStatistics

Document = list[list[int]]  # sentences of piece ids

# A one-sentence chunk is cut so that each side keeps at least this many words (or half the
# sentence's words, when it has fewer than twice this many).
MIN_SIDE_WORDS = 3


@dataclasses.dataclass(slots=True)
class SegmentPair:
    """Segments A and B (piece ids, already trimmed to fit) and the sentence label."""

    first: list[int]
    second: list[int]
    label: int
    short_target: bool = False

    def __len__(self) -> int:
        """Tokens of `[CLS] A [SEP] B [SEP]`."""
        return len(self.first) + len(self.second) + 3


def document_pairs(documents: list[Document], index: int, options: DataPrepOptions,
                   rng: random.Random, stats: ExampleStatistics,
                   space_before: bytes | None = None) -> list[SegmentPair]:
    """All segment pairs of `documents[index]` for one pass (one dupe) over it.

    `space_before[id]` is 1 for the pieces that follow a space (the tokenizer's table): the
    only places a one-sentence chunk is cut. None treats every piece as a word (documents of
    bare ids, in tests).
    """
    document = documents[index]
    pairs = []
    chunk: list[list[int]] = []
    chunk_length = 0
    target, short = _draw_target(options, rng)
    position = 0
    while position < len(document):
        chunk.append(document[position])
        chunk_length += len(document[position])
        if position == len(document) - 1 or chunk_length >= target:
            pair, put_back = _pair_from_chunk(chunk, documents, index, target, options, rng,
                                              stats, space_before)
            if pair is not None:
                _trim_pair(pair, options.max_tokens_per_pair, rng)
                pair.short_target = short
                pairs.append(pair)
            position -= put_back
            chunk, chunk_length = [], 0
            target, short = _draw_target(options, rng)
        position += 1
    return pairs


def _draw_target(options: DataPrepOptions, rng: random.Random) -> tuple[int, bool]:
    if rng.random() < options.short_seq_prob:
        return uniform_int(rng, 2, options.max_tokens_per_pair), True
    return options.max_tokens_per_pair, False


def uniform_int(rng: random.Random, low: int, high: int) -> int:
    """An integer uniform in [low, high], from one `random()` draw.

    `randint` is several times slower (it loops over `getrandbits`); for the ranges here (at
    most a few thousand values) the float's granularity, 2**-53, gives no measurable bias.
    """
    return low + int(rng.random() * (high - low + 1))


def _pair_from_chunk(chunk, documents, index, target, options, rng, stats, space_before):
    """Returns (pair or None, number of chunk sentences to put back into the document)."""
    if len(chunk) == 1 and options.single_sentence_chunks == "random_next" \
            and len(documents) > 1:
        stats.single_sentence_chunks_random_next += 1
        first = chunk[0]
        return SegmentPair(first, _random_next(documents, index, target - len(first), rng),
                           1), 0
    if len(chunk) == 1:
        sentence = chunk[0]
        cut = sentence_cut(sentence, space_before, rng)
        if cut is None:
            stats.chunks_skipped += 1
            return None, 0
        first, second, unused = sentence[:cut], sentence[cut:], 0
        stats.single_sentence_chunks_split += 1
    else:
        split = uniform_int(rng, 1, len(chunk) - 1)
        first = list(itertools.chain.from_iterable(chunk[:split]))
        second = list(itertools.chain.from_iterable(chunk[split:]))
        unused = len(chunk) - split
    objective = options.sentence_objective
    if objective == "sop" and rng.random() < 0.5:
        return SegmentPair(second, first, 1), 0
    if objective == "nsp" and rng.random() < 0.5:
        if len(documents) > 1:
            return SegmentPair(first, _random_next(documents, index, target - len(first), rng),
                               1), unused
        stats.nsp_without_other_document += 1
    return SegmentPair(first, second, 0), 0


def sentence_cut(sentence: list[int], space_before: bytes | None,
                 rng: random.Random) -> int | None:
    """Where a one-sentence chunk is cut into A and B: the index of a word's first piece,
    uniform among the words k with min(MIN_SIDE_WORDS, words // 2) <= k <= words - that.
    None for a sentence of one word.

    >>> rng = random.Random(0)  # seven one-piece words: each side keeps at least three
    >>> sorted({sentence_cut([7, 8, 9, 10, 11, 12, 13], None, rng) for _ in range(50)})
    [3, 4]
    >>> sentence_cut([7, 8, 9], bytes([0] * 8 + [1, 0]), rng)  # two words: cut between
    1
    >>> sentence_cut([7, 8, 9], bytes(10), rng) is None  # one word of three pieces
    True
    """
    starts = [position for position in range(1, len(sentence))
              if space_before is None or space_before[sentence[position]]]
    words = len(starts) + 1
    if words < 2:
        return None
    keep = min(MIN_SIDE_WORDS, words // 2)
    return starts[uniform_int(rng, keep, words - keep) - 1]


def _random_next(documents, index, target_length, rng) -> list[int]:
    """Sentences from a random start in a random other document, until `target_length`."""
    other = uniform_int(rng, 0, len(documents) - 2)
    other += other >= index
    document = documents[other]
    second: list[int] = []
    for sentence in document[uniform_int(rng, 0, len(document) - 1):]:
        second.extend(sentence)
        if len(second) >= target_length:
            break
    return second


def _trim_pair(pair: SegmentPair, max_tokens: int, rng: random.Random) -> None:
    """Trims the longer segment, front or back at random, until A + B fits `max_tokens`.

    The original removes one piece at a time from whichever segment is longer (B on a tie),
    from its front or back with probability 1/2. Which segment loses how many pieces follows
    from the lengths alone (`trimmed_lengths`); how many of them come off the front is then
    Binomial(removed, 1/2), drawn as the number of set bits of `removed` random bits.
    """
    first, second = trimmed_lengths(len(pair.first), len(pair.second), max_tokens)
    if first < len(pair.first):
        front = rng.getrandbits(len(pair.first) - first).bit_count()
        pair.first = pair.first[front:front + first]
    if second < len(pair.second):
        front = rng.getrandbits(len(pair.second) - second).bit_count()
        pair.second = pair.second[front:front + second]


def trimmed_lengths(first: int, second: int, max_tokens: int) -> tuple[int, int]:
    """Segment lengths after the one-at-a-time trimming of the longer segment (B on ties).

    >>> trimmed_lengths(10, 3, 8), trimmed_lengths(6, 6, 9), trimmed_lengths(2, 3, 9)
    ((5, 3), (5, 4), (2, 3))
    """
    excess = first + second - max_tokens
    if excess <= 0:
        return first, second
    gap = abs(first - second)
    if excess <= gap:
        return (first - excess, second) if first > second else (first, second - excess)
    # Both end up equal, then pieces alternate, B first.
    shorter = min(first, second) - (excess - gap) // 2
    return (shorter, shorter - (excess - gap) % 2)
