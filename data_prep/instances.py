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

A shard's documents are held as one array of piece ids (`ShardTokens`), and a pair is two
ranges of it, (start, length) for A and for B, since A and B are always runs of consecutive
sentences (or the two sides of one cut sentence); no piece is copied until `token_matrix`
lays a batch of pairs out as `[CLS] A [SEP] B [SEP]` rows in one numpy gather.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import random
from typing import NamedTuple, Sequence

import numpy as np

from albert_tf.text.options import DataPrepOptions
from albert_tf.text.pair_rows import pair_rows, with_specials
from albert_tf.text.statistics import ExampleStatistics
from albert_tf.text.vocabulary import flat_ids

# A one-sentence chunk is cut so that each side keeps at least this many words (or half the
# sentence's words, when it has fewer than twice this many).
MIN_SIDE_WORDS = 3


@dataclasses.dataclass
class ShardTokens:
    """A shard's tokenized documents end to end.

    Sentence s is `ids[sentence_starts[s]:sentence_starts[s + 1]]` (never empty); document d
    is sentences `document_starts[d]` to `document_starts[d + 1] - 1`. `word_starts[i]` is
    True where piece i follows a space (the only places a one-sentence chunk is cut); None
    treats every piece as a word (documents of bare ids, in tests). The offsets are Python
    lists: the pair loop reads them one at a time, which lists do faster than arrays.
    """

    ids: np.ndarray  # (pieces,) int32
    sentence_starts: list[int]  # (sentences + 1,)
    document_starts: list[int]  # (documents + 1,)
    word_starts: np.ndarray | None = None  # (pieces,) bool
    _with_specials: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32),
                                                   repr=False)

    @classmethod
    def from_documents(cls, documents: Sequence[Sequence[Sequence[int]]],
                       space_before: bytes | None = None) -> "ShardTokens":
        """From documents as lists of sentences of piece ids (see `from_arrays`)."""
        ids, lengths = flat_ids(list(itertools.chain.from_iterable(documents)))
        return cls.from_arrays(ids, lengths, [len(document) for document in documents],
                               space_before)

    @classmethod
    def from_arrays(cls, ids: np.ndarray, lengths: np.ndarray,
                    sentences_per_document: Sequence[int],
                    space_before: bytes | None = None) -> "ShardTokens":
        """From the piece ids of every sentence end to end (int32), each sentence's count,
        and each document's sentence count; empty sentences are dropped, then documents left
        empty. `space_before[id]` is 1 for the pieces that follow a space (the tokenizer's
        table)."""
        kept = np.concatenate([[0], np.cumsum(lengths > 0)])  # non-empty sentences before
        counts = np.asarray(sentences_per_document, np.int64)
        ends = np.cumsum(counts)
        kept_per_document = kept[ends] - kept[ends - counts]
        word_starts = None
        if space_before is not None:
            word_starts = np.frombuffer(space_before, np.uint8).astype(bool)[ids]
        return cls(ids, [0, *np.cumsum(lengths[lengths > 0]).tolist()],
                   [0, *np.cumsum(kept_per_document[kept_per_document > 0]).tolist()],
                   word_starts)

    def with_specials(self, max_seq_length: int) -> np.ndarray:
        """`ids`, then [CLS], [SEP] and max_seq_length + 1 zeros: what `token_matrix`
        gathers rows from (made once per shard)."""
        if len(self._with_specials) != len(self.ids) + max_seq_length + 3:
            self._with_specials = with_specials(self.ids, max_seq_length)
        return self._with_specials

    @property
    def num_documents(self) -> int:
        return len(self.document_starts) - 1

    @property
    def num_sentences(self) -> int:
        return len(self.sentence_starts) - 1


class Pair(NamedTuple):
    """Segments A and B as ranges of `ShardTokens.ids`, the sentence label, and whether the
    chunk aimed at a short length: the fields of the plain tuples `document_pairs` makes
    (`Pair._make` names them; a NamedTuple takes 0.3 us to make, a tenth of the loop's time
    per pair)."""

    first_start: int
    first_length: int
    second_start: int
    second_length: int
    label: int
    short_target: bool


def document_pairs(shard: ShardTokens, index: int, options: DataPrepOptions,
                   rng: random.Random, stats: ExampleStatistics, pairs: list[tuple]) -> None:
    """Appends to `pairs` all segment pairs of document `index` for one pass (one dupe), as
    tuples of `Pair`'s fields."""
    starts = shard.sentence_starts
    position, end = shard.document_starts[index], shard.document_starts[index + 1]
    max_tokens, short_seq_prob, draw = options.max_tokens_per_pair, options.short_seq_prob, \
        rng.random
    while True:
        # A target length for each chunk (and one more after the last, as the original).
        short = draw() < short_seq_prob
        target = 2 + int(draw() * (max_tokens - 1)) if short else max_tokens
        if position >= end:
            return
        # The chunk: sentences from `position` until they hold `target` pieces (or the
        # document ends), found by bisection on the sentence offsets.
        chunk_end = bisect.bisect_left(starts, starts[position] + target, position + 1, end)
        pair = _pair_from_chunk(shard, index, position, chunk_end, target, options, rng, stats)
        if pair is None:
            position = chunk_end
            continue
        first_start, first_length, second_start, second_length, label, put_back = pair
        if first_length + second_length > max_tokens:
            first_start, first_length, second_start, second_length = _trimmed(
                first_start, first_length, second_start, second_length, max_tokens, rng)
        pairs.append((first_start, first_length, second_start, second_length, label, short))
        position = chunk_end - put_back


def uniform_int(rng: random.Random, low: int, high: int) -> int:
    """An integer uniform in [low, high], from one `random()` draw.

    `randint` is several times slower (it loops over `getrandbits`); for the ranges here (at
    most a few thousand values) the float's granularity, 2**-53, gives no measurable bias.
    """
    return low + int(rng.random() * (high - low + 1))


def _pair_from_chunk(shard, index, chunk_start, chunk_end, target, options, rng, stats):
    """(A start, A length, B start, B length, label, number of chunk sentences to put back
    into the document) for the chunk of sentences [chunk_start, chunk_end), or None."""
    starts = shard.sentence_starts
    first = starts[chunk_start]
    if chunk_end - chunk_start == 1:
        length = starts[chunk_end] - first
        if options.single_sentence_chunks == "random_next" and shard.num_documents > 1:
            stats.single_sentence_chunks_random_next += 1
            return first, length, *_random_next(shard, index, target - length, rng), 1, 0
        words = None if shard.word_starts is None else shard.word_starts[first:first + length]
        cut = sentence_cut(length, words, rng)
        if cut is None:
            stats.chunks_skipped += 1
            return None
        middle, unused = first + cut, 0
        stats.single_sentence_chunks_split += 1
    else:
        split = uniform_int(rng, 1, chunk_end - chunk_start - 1)
        middle, unused = starts[chunk_start + split], chunk_end - chunk_start - split
    second_length = starts[chunk_end] - middle
    objective = options.sentence_objective
    if objective == "sop" and rng.random() < 0.5:
        return middle, second_length, first, middle - first, 1, 0
    if objective == "nsp" and rng.random() < 0.5:
        if shard.num_documents > 1:
            return (first, middle - first,
                    *_random_next(shard, index, target - (middle - first), rng), 1, unused)
        stats.nsp_without_other_document += 1
    return first, middle - first, middle, second_length, 0, 0


def sentence_cut(length: int, word_starts: np.ndarray | None,
                 rng: random.Random) -> int | None:
    """Where a one-sentence chunk of `length` pieces is cut into A and B: the index of a
    word's first piece, uniform among the words k with min(MIN_SIDE_WORDS, words // 2) <= k
    <= words - that. `word_starts[i]` says whether piece i starts a word (None: every piece
    does). None for a sentence of one word.

    >>> rng = random.Random(0)  # seven one-piece words: each side keeps at least three
    >>> sorted({sentence_cut(7, None, rng) for _ in range(50)})
    [3, 4]
    >>> sentence_cut(3, np.array([True, True, False]), rng)  # two words: cut between
    1
    >>> sentence_cut(3, np.array([True, False, False]), rng) is None  # one word
    True
    """
    if word_starts is None:
        words = length
    else:
        starts = np.flatnonzero(word_starts[1:]) + 1
        words = len(starts) + 1
    if words < 2:
        return None
    keep = min(MIN_SIDE_WORDS, words // 2)
    choice = uniform_int(rng, keep, words - keep)
    return choice if word_starts is None else int(starts[choice - 1])


def _random_next(shard, index, target_length, rng) -> tuple[int, int]:
    """(start, length) of sentences from a random start in a random other document, until
    they hold `target_length` pieces (at least one sentence)."""
    other = uniform_int(rng, 0, shard.num_documents - 2)
    other += other >= index
    low, high = shard.document_starts[other], shard.document_starts[other + 1]
    sentence = low + uniform_int(rng, 0, high - low - 1)
    starts = shard.sentence_starts
    end = bisect.bisect_left(starts, starts[sentence] + target_length, sentence + 1, high)
    return starts[sentence], starts[end] - starts[sentence]


def _trimmed(first_start, first_length, second_start, second_length, max_tokens, rng):
    """A and B (start, length each) trimmed until they fit `max_tokens`, from the longer
    segment's front or back at random.

    The original removes one piece at a time from whichever segment is longer (B on a tie),
    from its front or back with probability 1/2. Which segment loses how many pieces follows
    from the lengths alone (`trimmed_lengths`); how many of them come off the front is then
    Binomial(removed, 1/2), drawn as the number of set bits of `removed` random bits.
    """
    first, second = trimmed_lengths(first_length, second_length, max_tokens)
    if first < first_length:
        first_start += rng.getrandbits(first_length - first).bit_count()
    if second < second_length:
        second_start += rng.getrandbits(second_length - second).bit_count()
    return first_start, first, second_start, second


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


def pair_table(pairs: Sequence[tuple]) -> np.ndarray:
    """(pairs, 6) int64: the fields of `Pair`, a row a pair."""
    return np.fromiter(itertools.chain.from_iterable(pairs), np.int64,
                       len(pairs) * len(Pair._fields)).reshape(len(pairs), len(Pair._fields))


def token_matrix(shard: ShardTokens, table: np.ndarray, max_seq_length: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`[CLS] A [SEP] B [SEP]` of each pair of `table` (`pair_table`): the
    (pairs, max_seq_length) int32 ids, zeros after the end, the lengths and the first [SEP]'s
    column (both int64); see `pair_rows`."""
    return pair_rows(shard.with_specials(max_seq_length), table[:, :4], max_seq_length)
