"""N-gram masking for the masked-LM objective (paper section 4.1, Joshi et al. 2019), in batches.

For `[CLS] A [SEP] B [SEP]` of length T, the budget is
num_to_predict = min(max_predictions, max(1, round(T * masked_lm_prob))) pieces.
Spans are runs of n whole words (or pieces, without whole-word masking) with
p(n) = (1/n) / sum_k (1/k) for n <= ngram (6/11, 3/11, 2/11 for ngram 3), placed at start words
taken in a random order. `[CLS]`/`[SEP]` are never masked and no span crosses a `[SEP]`.

How span lengths stay exactly p(n): a length is drawn, then kept until a start word is found
where the whole span fits (free words, one segment); only then is the next length drawn. The
original code draws a new length at every start and drops the span if it overlaps, which
favours short spans (long ones overlap more often). A span that would pass the budget is
shortened to fit (so the statistics check p(n) on the spans placed while the budget could
still hold any span); if the budget is still not spent when the starts run out, single free
words fill it.

Each chosen piece becomes `[MASK]` with probability `mask_token_rate` (0.8), a random piece
with `random_token_rate` (0.1: an ordinary piece, never a control symbol, unless
`random_from_ordinary` is off, as in the original), and stays itself otherwise. The recipe
is `albert_tf.config.masking.MaskingRecipe`; the sequence length and the prediction slots
are the shards'.

The work is done for a batch of examples at once with numpy: step k of the greedy placement
looks at the k-th start word of every example still short of its budget, so the Python loop
runs over steps (a few dozen), not over examples and words.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Sequence

import numpy as np

from albert_tf.config.masking import MaskingRecipe
from albert_tf.text.statistics import ExampleStatistics
from albert_tf.text.vocabulary import CLS_ID, MASK_ID, SEP_ID, Vocabulary


def span_length_probabilities(ngram: int, favor_shorter: bool) -> list[float]:
    """p(n) for n = 1..ngram.

    >>> [round(p * 11, 6) for p in span_length_probabilities(3, True)]
    [6.0, 3.0, 2.0]
    """
    weights = [1.0 / n if favor_shorter else 1.0 for n in range(1, ngram + 1)]
    return [weight / sum(weights) for weight in weights]


@dataclasses.dataclass
class Words:
    """The maskable words of a batch: begin and end piece positions, (batch, max_words).

    Rows hold `count[b]` words; the rest is padding (begins and ends far past the sequence,
    `last_of_segment` -1, so no span fits there). `last_of_segment[b, w]` is the index of the
    last word of w's segment, `token_word[b, t]` the word of piece t (-1 for [CLS], [SEP],
    padding), `boundary[b, t]` 1 where a piece starts a word in the vocabulary's sense.
    """

    begins: np.ndarray
    ends: np.ndarray
    count: np.ndarray
    last_of_segment: np.ndarray
    token_word: np.ndarray
    boundary: np.ndarray


@dataclasses.dataclass
class MaskedBatch:
    """Masked examples, padded: `input_ids`, `segment_ids`, `token_boundary` are
    (batch, max_seq_length); `positions` (ascending) and `original_ids` are
    (batch, max_predictions) with `num_predictions[b]` real entries; `words` as computed."""

    input_ids: np.ndarray
    lengths: np.ndarray
    segment_ids: np.ndarray
    token_boundary: np.ndarray
    positions: np.ndarray
    original_ids: np.ndarray
    num_predictions: np.ndarray
    words: Words


class TokenMasker:
    """Masks batches of `[CLS] A [SEP] B [SEP]` token lists as the module docstring says.

    Args:
        recipe: the masking recipe (a `DataPrepOptions` is one).
        max_seq_length: pieces per sequence, `[CLS]` and `[SEP]`s included.
        max_predictions_per_seq: prediction slots per sequence: at most this many pieces
            are masked.
        vocabulary: which pieces start words, and which are ordinary.
    """

    def __init__(self, recipe: MaskingRecipe, max_seq_length: int,
                 max_predictions_per_seq: int, vocabulary: Vocabulary):
        self.recipe = recipe
        self.max_seq_length = max_seq_length
        self.max_predictions_per_seq = max_predictions_per_seq
        self.word_start = np.frombuffer(vocabulary.word_start, dtype=np.uint8)
        self.random_ids = (np.asarray(vocabulary.ordinary_ids, dtype=np.int64)
                           if recipe.random_from_ordinary else np.arange(vocabulary.size))
        self.cumulative = np.cumsum(span_length_probabilities(recipe.ngram,
                                                              recipe.favor_shorter_ngram))
        self.cumulative[-1] = 1.0

    def budget(self, lengths: np.ndarray) -> np.ndarray:
        """num_to_predict per example (numpy rounds halves to even, as Python's round)."""
        wanted = np.round(np.asarray(lengths) * self.recipe.masked_lm_prob).astype(np.int64)
        return np.minimum(self.max_predictions_per_seq, np.maximum(1, wanted))

    def mask(self, segments: Sequence[tuple[Sequence[int], Sequence[int]]],
             rng: np.random.Generator, stats: ExampleStatistics) -> MaskedBatch:
        """Masks `[CLS] A [SEP] B [SEP]` for each (A, B) of `segments`; counts into `stats`."""
        tokens, lengths, separators = self._token_matrix(segments)
        return self.mask_tokens(tokens, lengths, separators, rng, stats)

    def mask_tokens(self, tokens: np.ndarray, lengths: np.ndarray, separators: np.ndarray,
                    rng: np.random.Generator, stats: ExampleStatistics,
                    boundary: np.ndarray | None = None) -> MaskedBatch:
        """Masks unmasked `[CLS] A [SEP] B [SEP]` rows of `tokens` (batch, max_seq_length).

        `lengths[b]` real pieces, the first [SEP] at `separators[b]`. Word starts come from
        `boundary` (batch, max_seq_length) when given (a record's `token_boundary`, as the
        tf.data pipeline's dynamic re-masking has it), else from the vocabulary.
        """
        words = self.words(tokens, lengths, separators, boundary)
        covered = self._choose_words(words, self.budget(lengths), rng, stats)
        chosen = np.take_along_axis(covered, np.maximum(words.token_word, 0), axis=1)
        chosen &= words.token_word >= 0
        columns = np.arange(tokens.shape[1])
        segment_ids = ((columns > separators[:, None]) & (columns < lengths[:, None]))
        return self._replace(tokens, lengths, segment_ids.astype(np.uint8), chosen, words,
                             rng, stats)

    def _token_matrix(self, segments):
        """(batch, max_seq_length) ids of `[CLS] A [SEP] B [SEP]`, lengths, first [SEP]."""
        first = np.fromiter((len(a) for a, _ in segments), np.int64, len(segments))
        second = np.fromiter((len(b) for _, b in segments), np.int64, len(segments))
        lengths, separators = first + second + 3, first + 1
        tokens = np.zeros((len(segments), self.max_seq_length), np.int32)
        rows = np.arange(len(segments))
        tokens[rows, 0] = CLS_ID
        tokens[rows, separators] = SEP_ID
        tokens[rows, lengths - 1] = SEP_ID
        # Segment A starts at column 1, segment B after the first [SEP].
        for index, sizes, columns in ((0, first, np.ones_like(first)),
                                      (1, second, separators + 1)):
            values = np.fromiter(itertools.chain.from_iterable(pair[index] for pair in segments),
                                 np.int32, int(sizes.sum()))
            within = np.arange(len(values)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            tokens[np.repeat(rows, sizes), within + np.repeat(columns, sizes)] = values
        return tokens, lengths, separators

    def words(self, tokens: np.ndarray, lengths: np.ndarray, separators: np.ndarray,
              boundary: np.ndarray | None = None) -> Words:
        """Maskable words: a word starts at a word-start piece (every piece, without whole-word
        masking) and at the first piece of each segment; it ends before the next word or the
        [SEP]. Word starts are those of the original: the word marker, a lone punctuation
        mark, or a control piece (see `tokenizer.Vocabulary`), or those of `boundary`."""
        batch, width = tokens.shape
        columns = np.arange(width)[None, :]
        if boundary is None:
            boundary = self.word_start[tokens]
        boundary = boundary * (columns < lengths[:, None])
        maskable = ((columns > 0) & (columns < lengths[:, None] - 1)
                    & (columns != separators[:, None]))
        starts = maskable.copy()
        if self.recipe.whole_word_mask:
            starts &= ((boundary == 1) | (columns == 1) | (columns == separators[:, None] + 1))
        token_word = np.where(maskable, np.cumsum(starts, axis=1) - 1, -1)
        count = starts.sum(axis=1)
        padded = width + self.recipe.ngram  # room for span ends past the last word
        begins = np.full((batch, padded), 4 * width, np.int64)
        rows, positions = np.nonzero(starts)
        begins[rows, token_word[rows, positions]] = positions
        first_segment = starts & (columns < separators[:, None])
        split = first_segment.sum(axis=1)  # words [0, split) are in segment A
        # A word ends where the next begins, but the last of each segment at the piece before
        # its [SEP]; a padding word ends where it begins (no pieces).
        ends = np.empty_like(begins)
        ends[:, :-1] = begins[:, 1:]
        ends[:, -1] = 4 * width
        every = np.arange(batch)
        in_a, in_b = split > 0, count > split
        ends[every[in_a], split[in_a] - 1] = separators[in_a]
        ends[every[in_b], count[in_b] - 1] = lengths[in_b] - 1
        word_index = np.arange(padded)[None, :]
        last_of_segment = np.where(word_index < split[:, None], split[:, None] - 1,
                                   count[:, None] - 1)
        last_of_segment[word_index >= count[:, None]] = -1
        return Words(begins, ends, count, last_of_segment, token_word,
                     boundary.astype(np.uint8))

    def _choose_words(self, words: Words, budget: np.ndarray, rng: np.random.Generator,
                      stats: ExampleStatistics) -> np.ndarray:
        """The greedy placement of the module docstring, one start word per example per step.

        Returns covered words, (batch, max_words + ngram) bool.
        """
        ngram = self.recipe.ngram
        batch, padded = words.begins.shape
        spans, unconstrained = stats.span_counters(ngram)
        begins, ends, last_of_segment = words.begins, words.ends, words.last_of_segment
        order, first_start = _random_word_orders(words.count, padded, rng)
        # Span lengths in the order they are needed: each placed span takes the next one.
        pending = np.searchsorted(self.cumulative, rng.random(
            (batch, self.max_predictions_per_seq + 1)), side="right") + 1
        longest = _longest_span_pieces(words, ngram)
        # The loop indexes flattened arrays (row * width + column): one gather per lookup.
        pending_width = pending.shape[1]
        pending, begins, ends = pending.ravel(), begins.ravel(), ends.ravel()
        last_of_segment = last_of_segment.ravel()
        covered = np.zeros(batch * padded, bool)
        drawn = np.zeros(batch, np.int64)
        budget = budget.copy()
        placed_spans, placed_unconstrained = [], []
        for step in range(padded - ngram):
            rows = np.nonzero((budget > 0) & (step < words.count))[0]
            if not len(rows):
                break
            start = order[first_start[rows] + step]
            length = pending[rows * pending_width + drawn[rows]]
            at = rows * padded + start
            fits = start + length - 1 <= last_of_segment[at]
            for offset in range(ngram):
                fits &= ~(covered[at + offset] & (offset < length))
            # The longest length up to the drawn one whose pieces fit the budget.
            begin, left = begins[at], budget[rows]
            placed = np.zeros(len(rows), np.int64)
            for size in range(ngram, 0, -1):
                room = (size <= length) & (ends[at + size - 1] - begin <= left)
                placed = np.where((placed == 0) & room, size, placed)
            take = fits & (placed > 0)
            rows, at, placed, begin = rows[take], at[take], placed[take], begin[take]
            for offset in range(ngram):
                covered[at[offset < placed] + offset] = True
            placed_spans.append(placed)
            placed_unconstrained.append(placed[budget[rows] >= longest[rows]])
            budget[rows] -= ends[at + placed - 1] - begin
            drawn[rows] += 1
        _count_spans(spans, placed_spans)
        _count_spans(unconstrained, placed_unconstrained)
        covered = covered.reshape(batch, padded)
        spans[1] += _fill_with_single_words(words, order, first_start, covered, budget)
        return covered

    def _replace(self, tokens, lengths, segment_ids, chosen, words, rng, stats) -> MaskedBatch:
        rows, positions = np.nonzero(chosen)  # row-major: positions ascend within a row
        originals = tokens[rows, positions]
        draw = rng.random(len(rows))
        shown_as_mask = draw < self.recipe.mask_token_rate
        random_pick = draw >= 1.0 - self.recipe.random_token_rate
        replacement = np.where(shown_as_mask, MASK_ID, originals)
        replacement[random_pick] = self.random_ids[
            rng.integers(len(self.random_ids), size=int(random_pick.sum()))]
        masked = tokens.copy()
        masked[rows, positions] = replacement
        counts = np.bincount(rows, minlength=len(tokens))
        slots = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
        width = self.max_predictions_per_seq
        position_matrix = np.zeros((len(tokens), width), np.int64)
        original_matrix = np.zeros((len(tokens), width), np.int64)
        position_matrix[rows, slots] = positions
        original_matrix[rows, slots] = originals
        stats.masked_tokens += len(rows)
        stats.replaced_by_mask += int(shown_as_mask.sum())
        stats.kept_original += int((~shown_as_mask & ~random_pick).sum())
        stats.replaced_by_random += int(random_pick.sum())
        return MaskedBatch(masked, lengths, segment_ids, words.boundary, position_matrix,
                           original_matrix, counts, words)


def _random_word_orders(count: np.ndarray, padded: int,
                        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A uniformly random order of each row's `count[b]` words, rows laid end to end; row b's
    starts at `first_start[b]`. Every row of 0..padded-1 is shuffled, then only the real
    words are kept, in their shuffled order."""
    shuffled = rng.permuted(np.broadcast_to(np.arange(padded), (len(count), padded)), axis=1)
    return shuffled[shuffled < count[:, None]], np.cumsum(count) - count


def _longest_span_pieces(words: Words, ngram: int) -> np.ndarray:
    """Pieces of each row's longest possible span (ngram consecutive words; all words if fewer).

    While the budget could hold it, no span is shortened, so the spans placed then have
    exactly their drawn lengths; the statistics count them apart to check p(n).
    """
    batch, padded = words.begins.shape
    windows = np.where(
        np.arange(padded - ngram + 1)[None, :] + ngram - 1 < words.count[:, None],
        words.ends[:, ngram - 1:] - words.begins[:, :padded - ngram + 1], 0)
    everything = (words.ends[np.arange(batch), np.maximum(words.count - 1, 0)]
                  - words.begins[:, 0])
    return np.where(words.count < ngram, everything, windows.max(axis=1))


def _count_spans(counts: list[int], placed: list[np.ndarray]) -> None:
    """Adds the spans of each length in `placed` (arrays of lengths) to `counts`."""
    if placed:
        lengths = np.bincount(np.concatenate(placed), minlength=len(counts))
        for size, count in enumerate(lengths.tolist()):
            counts[size] += count


def _fill_with_single_words(words: Words, order: np.ndarray, first_start: np.ndarray,
                            covered: np.ndarray, budget: np.ndarray) -> int:
    """Spends what the spans left of a budget (rare) on free words in the start order;
    returns how many words it used."""
    used = 0
    for row in np.nonzero(budget > 0)[0]:
        left = int(budget[row])
        for start in order[first_start[row]:first_start[row] + words.count[row]]:
            size = int(words.ends[row, start] - words.begins[row, start])
            if not covered[row, start] and size <= left:
                covered[row, start] = True
                left -= size
                used += 1
                if not left:
                    break
        budget[row] = left
    return used
