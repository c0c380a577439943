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

import numpy as np

from albert_tf.config.masking import MaskingRecipe
from albert_tf.text.statistics import ExampleStatistics
from albert_tf.text.vocabulary import MASK_ID, Vocabulary


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
    so no span fits there). Words [0, `in_first[b]`) are in segment A, the others in B;
    `token_word[b, t]` is the word of piece t (-1 for [CLS], [SEP], padding), `boundary[b, t]`
    1 where a piece starts a word in the vocabulary's sense.
    """

    begins: np.ndarray
    ends: np.ndarray
    count: np.ndarray
    in_first: np.ndarray
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
    """Masks batches of `[CLS] A [SEP] B [SEP]` rows (`albert_tf.text.pair_rows`) as the
    module docstring says.

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
        self._budgets = self.budget(np.arange(max_seq_length + 1))  # by sequence length

    def budget(self, lengths: np.ndarray) -> np.ndarray:
        """num_to_predict per example (numpy rounds halves to even, as Python's round)."""
        wanted = np.round(np.asarray(lengths) * self.recipe.masked_lm_prob).astype(np.int64)
        return np.minimum(self.max_predictions_per_seq, np.maximum(1, wanted))

    def mask_tokens(self, tokens: np.ndarray, lengths: np.ndarray, separators: np.ndarray,
                    rng: np.random.Generator, stats: ExampleStatistics,
                    boundary: np.ndarray | None = None) -> MaskedBatch:
        """Masks unmasked `[CLS] A [SEP] B [SEP]` rows of `tokens` (batch, max_seq_length).

        `lengths[b]` real pieces, the first [SEP] at `separators[b]`. Word starts come from
        `boundary` (batch, max_seq_length) when given (a record's `token_boundary`, as the
        tf.data pipeline's dynamic re-masking has it), else from the vocabulary.
        """
        words = self.words(tokens, lengths, separators, boundary)
        covered = self._choose_words(words, self._budgets[lengths], rng, stats)
        # Each piece looks up its word in the flattened rows; a piece of no word (-1) lands on
        # the previous row's last column (the last row's, for row 0), a padding word that
        # is never covered.
        row_starts = np.arange(0, covered.size, covered.shape[1])[:, None]
        chosen = covered.ravel()[words.token_word + row_starts]
        columns = np.arange(tokens.shape[1])
        segment_ids = ((columns > separators[:, None]) & (columns < lengths[:, None]))
        return self._replace(tokens, lengths, segment_ids.astype(np.uint8), chosen, words,
                             rng, stats)

    def words(self, tokens: np.ndarray, lengths: np.ndarray, separators: np.ndarray,
              boundary: np.ndarray | None = None) -> Words:
        """Maskable words: a word starts at a word-start piece (every piece, without whole-word
        masking) and at the first piece of each segment; it ends before the next word or the
        [SEP]. Word starts are those of the original: the word marker, a lone punctuation
        mark, or a control piece (see `tokenizer.Vocabulary`), or those of `boundary`."""
        batch, width = tokens.shape
        columns = np.arange(width)
        every = np.arange(batch)
        inside = columns < lengths[:, None]
        if boundary is None:
            boundary = np.take(self.word_start, tokens)
        boundary = (boundary * inside).astype(np.uint8, copy=False)
        maskable = columns < lengths[:, None] - 1
        maskable[:, 0] = False
        maskable[every, separators] = False
        if self.recipe.whole_word_mask:
            starts = boundary == 1
            # Each segment's first piece starts a word (a [SEP] in the last column has no
            # segment after it; the column it would mark is not maskable anyway).
            starts[:, 1] = True
            starts[every, np.minimum(separators + 1, width - 1)] = True
            starts &= maskable
        else:
            starts = maskable.copy()
        words_so_far = np.cumsum(starts, axis=1, dtype=np.int32)
        token_word = np.where(maskable, words_so_far - 1, -1)
        count = words_so_far[:, -1].astype(np.int64)
        split = words_so_far[every, separators].astype(np.int64)  # words [0, split) are in A
        padded = width + self.recipe.ngram  # room for span ends past the last word
        word_index = np.arange(padded)
        real_word = word_index < count[:, None]
        begins = np.full((batch, padded), 4 * width, np.int32)
        begins[real_word] = np.flatnonzero(starts) % width  # row-major, as `real_word`
        # A word ends where the next begins, but the last of each segment at the piece before
        # its [SEP]; a padding word ends where it begins (no pieces).
        ends = np.empty_like(begins)
        ends[:, :-1] = begins[:, 1:]
        ends[:, -1] = 4 * width
        in_a, in_b = split > 0, count > split
        ends[every[in_a], split[in_a] - 1] = separators[in_a]
        ends[every[in_b], count[in_b] - 1] = lengths[in_b] - 1
        return Words(begins, ends, count, split, token_word, boundary)

    def _choose_words(self, words: Words, budget: np.ndarray, rng: np.random.Generator,
                      stats: ExampleStatistics) -> np.ndarray:
        """The greedy placement of the module docstring, one start word per example per step.

        The start words' random order is drawn as the placement goes (a Fisher-Yates
        shuffle stopped early): step k swaps column k of a row's order with a column drawn
        uniformly from k to the row's last word, so its first k + 1 columns are a uniformly
        random sequence of distinct words, and a row stops drawing when its budget is spent
        (after about 19 of its 110 words at sequence 128). Returns covered words,
        (batch, max_words + ngram) bool.
        """
        ngram = self.recipe.ngram
        batch, padded = words.begins.shape
        spans, unconstrained = stats.span_counters(ngram)
        # The loop indexes flattened arrays (row * width + column): one gather per lookup.
        order = np.tile(np.arange(padded, dtype=np.int64), batch)
        length = self._span_lengths(batch, rng)  # each row's span length until it is placed
        longest = _longest_span_pieces(words, ngram)
        begins, ends = words.begins.ravel(), words.ends.ravel()
        # The last word of segment A, and of B: no span crosses a [SEP].
        last_in_first, last_word = words.in_first - 1, words.count - 1
        covered = np.zeros(batch * padded, bool)
        budget = budget.copy()
        placed_spans, placed_unconstrained = [], []
        rows = np.nonzero((budget > 0) & (words.count > 0))[0]
        for step in range(padded - ngram):
            if not len(rows):
                break
            row_starts = rows * padded
            slot, swap = row_starts + step, row_starts + rng.integers(step, words.count[rows])
            start = order[swap]
            order[swap] = order[slot]
            order[slot] = start
            at = row_starts + start
            wanted = length[rows]
            last_of_segment = np.where(start < words.in_first[rows], last_in_first[rows],
                                       last_word[rows])
            fits = (start + wanted - 1 <= last_of_segment) & ~covered[at]
            for offset in range(1, ngram):
                fits &= ~(covered[at + offset] & (wanted > offset))
            # The longest length up to the drawn one whose pieces fit the budget: a span's
            # pieces grow with its length, so the lengths that fit are 1..placed.
            begin = begins[at]
            last_piece = begin + budget[rows]
            placed = np.zeros(len(rows), np.int64)
            for offset in range(ngram):
                placed += ends[at + offset] <= last_piece
            placed = np.minimum(placed, wanted)
            take = np.nonzero(fits & (placed > 0))[0]
            taken_rows, at, placed, begin = rows[take], at[take], placed[take], begin[take]
            covered[at] = True
            for offset in range(1, ngram):
                covered[at[placed > offset] + offset] = True
            placed_spans.append(placed)
            placed_unconstrained.append(placed[budget[taken_rows] >= longest[taken_rows]])
            budget[taken_rows] -= ends[at + placed - 1] - begin
            length[taken_rows] = self._span_lengths(len(taken_rows), rng)
            rows = rows[(budget[rows] > 0) & (words.count[rows] > step + 1)]
        _count_spans(spans, placed_spans)
        _count_spans(unconstrained, placed_unconstrained)
        covered = covered.reshape(batch, padded)
        spans[1] += _fill_with_single_words(words, order.reshape(batch, padded), covered,
                                            budget)
        return covered

    def _span_lengths(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """`count` span lengths drawn from p(n)."""
        return np.searchsorted(self.cumulative, rng.random(count), side="right") + 1

    def _replace(self, tokens, lengths, segment_ids, chosen, words, rng, stats) -> MaskedBatch:
        flat = np.flatnonzero(chosen)  # row-major: positions ascend within a row
        originals = tokens.ravel()[flat]
        draw = rng.random(len(flat))
        shown_as_mask = draw < self.recipe.mask_token_rate
        random_pick = draw >= 1.0 - self.recipe.random_token_rate
        replacement = np.where(shown_as_mask, MASK_ID, originals)
        replacement[random_pick] = self.random_ids[
            rng.integers(len(self.random_ids), size=int(random_pick.sum()))]
        masked = tokens.copy()
        masked.ravel()[flat] = replacement
        counts = chosen.sum(axis=1)
        filled = np.arange(self.max_predictions_per_seq) < counts[:, None]
        position_matrix = np.zeros(filled.shape, np.int64)
        original_matrix = np.zeros(filled.shape, np.int64)
        position_matrix[filled] = flat % tokens.shape[1]  # row-major, as `flat`
        original_matrix[filled] = originals
        stats.masked_tokens += len(flat)
        stats.replaced_by_mask += int(shown_as_mask.sum())
        stats.kept_original += int((~shown_as_mask & ~random_pick).sum())
        stats.replaced_by_random += int(random_pick.sum())
        return MaskedBatch(masked, lengths, segment_ids, words.boundary, position_matrix,
                           original_matrix, counts, words)


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


def _fill_with_single_words(words: Words, order: np.ndarray, covered: np.ndarray,
                            budget: np.ndarray) -> int:
    """Spends what the spans left of a budget (rare) on free words in the start order (a row
    left short has drawn all of its order: see `_choose_words`); returns how many words it
    used."""
    used = 0
    for row in np.nonzero(budget > 0)[0]:
        left = int(budget[row])
        for start in order[row, :words.count[row]]:
            size = int(words.ends[row, start] - words.begins[row, start])
            if not covered[row, start] and size <= left:
                covered[row, start] = True
                left -= size
                used += 1
                if not left:
                    break
        budget[row] = left
    return used
