"""N-gram masking for the masked-LM objective (paper section 4.1, Joshi et al. 2019).

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
still hold any span); if the budget is still not spent when the starts run out, single free words
fill it.

Each chosen piece becomes `[MASK]` with probability 0.8, stays itself with 0.1, and becomes a
random ordinary piece (never a control symbol, unlike the original) with 0.1.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import operator
import random

from data_prep.example_encoding import gather
from data_prep.options import DataPrepOptions
from data_prep.statistics import ExampleStatistics
from data_prep.tokenizer import MASK_ID, Vocabulary


@dataclasses.dataclass
class MaskedTokens:
    """The masked token list, the masked positions (ascending) and their original ids."""

    tokens: list[int]
    positions: list[int]
    original_ids: list[int]


def span_length_probabilities(ngram: int, favor_shorter: bool) -> list[float]:
    """p(n) for n = 1..ngram.

    >>> [round(p * 11, 6) for p in span_length_probabilities(3, True)]
    [6.0, 3.0, 2.0]
    """
    weights = [1.0 / n if favor_shorter else 1.0 for n in range(1, ngram + 1)]
    return [weight / sum(weights) for weight in weights]


class TokenMasker:
    """Masks `[CLS] A [SEP] B [SEP]` token lists as the module docstring describes."""

    def __init__(self, options: DataPrepOptions, vocabulary: Vocabulary):
        self.options = options
        self.word_start = vocabulary.word_start
        self.ordinary_ids = tuple(int(i) for i in vocabulary.ordinary_ids)
        self.cumulative = list(itertools.accumulate(
            span_length_probabilities(options.ngram, options.favor_shorter_ngram)))
        self.cumulative[-1] = 1.0

    def budget(self, num_tokens: int) -> int:
        options = self.options
        return min(options.max_predictions_per_seq,
                   max(1, int(round(num_tokens * options.masked_lm_prob))))

    def words(self, tokens: list[int], first_separator: int,
              boundary: bytes | None = None) -> tuple[list[int], list[int]]:
        """Begin and end piece positions of the maskable words, in order.

        A word starts at a word-start piece (every piece, without whole-word masking) and at
        the first piece of each segment; it ends before the next word or the `[SEP]`.
        `boundary` (one 0/1 byte per token: starts a word) is computed if not given.
        """
        last = len(tokens) - 1
        if self.options.whole_word_mask:
            if boundary is None:
                boundary = bytes(gather(self.word_start, tokens))
            # [CLS] and [SEP] are word starts in the table; they bound words but are not words.
            begins = list(itertools.compress(range(1, last), boundary[1:last]))
            separator = bisect.bisect_left(begins, first_separator)
            del begins[separator]
            if not begins or begins[0] != 1:
                begins.insert(0, 1)
                separator += 1
            if first_separator + 1 < last and (separator == len(begins)
                                               or begins[separator] != first_separator + 1):
                begins.insert(separator, first_separator + 1)
        else:
            begins = [p for p in range(1, last) if p != first_separator]
        ends = begins[1:] + [last]
        last_of_first = bisect.bisect_left(begins, first_separator) - 1
        if last_of_first >= 0 and ends[last_of_first] > first_separator:
            ends[last_of_first] = first_separator
        return begins, ends

    def mask(self, tokens: list[int], first_separator: int, rng: random.Random,
             stats: ExampleStatistics, boundary: bytes | None = None) -> MaskedTokens:
        """Masks `[CLS] A [SEP] B [SEP]` whose first `[SEP]` is at `first_separator`.

        `boundary` optionally gives the word starts (see `words`), saving a lookup pass.
        """
        positions = self.choose_positions(tokens, first_separator, rng, stats, boundary)
        return self._replace(tokens, positions, rng, stats)

    def choose_positions(self, tokens: list[int], first_separator: int, rng: random.Random,
                         stats: ExampleStatistics, boundary: bytes | None = None) -> list[int]:
        """The positions to predict, ascending (the hot loop of data prep, kept flat)."""
        begins, ends = self.words(tokens, first_separator, boundary)
        num_words = len(begins)
        budget = self.budget(len(tokens))
        split = bisect.bisect_left(begins, first_separator)  # words [0, split) are in A
        # While the budget could hold the longest possible span, no span is shortened, so
        # the spans placed then have exactly the drawn lengths; statistics count them apart.
        ngram = self.options.ngram
        # (Windows of fewer words at the end are shorter than the last full one.)
        longest = (max(map(operator.sub, ends[ngram - 1:], begins)) if num_words >= ngram
                   else ends[-1] - begins[0])
        draw, cumulative, find = rng.random, self.cumulative, bisect.bisect_right
        spans, unconstrained = stats.span_counters(ngram)
        covered = bytearray(num_words)
        order = list(range(num_words))
        positions: list[int] = []
        pending = find(cumulative, draw()) + 1
        taken = 0
        while budget and taken < num_words:
            # One step of a lazy Fisher-Yates shuffle: order[taken] is the next start word.
            pick = taken + int(draw() * (num_words - taken))
            start = order[pick]
            order[pick] = order[taken]
            order[taken] = start
            taken += 1
            if pending == 1:  # over half the spans: the general test below, made cheap
                begin, end = begins[start], ends[start]
                if covered[start] or end - begin > budget:
                    continue
                covered[start] = length = 1
            else:
                stop = start + pending
                if (stop > num_words or (start < split) != (stop - 1 < split)
                        or covered.find(1, start, stop) >= 0):
                    continue
                length, begin = pending, begins[start]
                while length and ends[start + length - 1] - begin > budget:
                    length -= 1
                if not length:
                    continue
                end = ends[start + length - 1]
                covered[start:start + length] = b"\x01" * length
            positions.extend(range(begin, end))
            spans[length] += 1
            if budget >= longest:
                unconstrained[length] += 1
            budget -= end - begin
            pending = find(cumulative, draw()) + 1
        if budget:
            rest = order[taken:]
            rng.shuffle(rest)
            spans[1] += self._fill_with_single_words(order[:taken] + rest, begins, ends,
                                                     covered, budget, positions)
        positions.sort()
        return positions

    @staticmethod
    def _fill_with_single_words(order, begins, ends, covered, budget, positions) -> int:
        """Spends what the spans left of the budget on free words; returns how many."""
        words = 0
        for start in order:
            size = ends[start] - begins[start]
            if not covered[start] and size <= budget:
                covered[start] = 1
                positions.extend(range(begins[start], ends[start]))
                words += 1
                budget -= size
                if not budget:
                    break
        return words

    def _replace(self, tokens, positions, rng, stats) -> MaskedTokens:
        masked = list(tokens)
        ordinary, draw = self.ordinary_ids, rng.random
        kept = randomized = 0
        for position in positions:
            value = draw()
            if value < 0.8:
                masked[position] = MASK_ID
            elif value < 0.9:
                kept += 1
            else:
                masked[position] = ordinary[int(draw() * len(ordinary))]
                randomized += 1
        stats.replaced_by_mask += len(positions) - kept - randomized
        stats.kept_original += kept
        stats.replaced_by_random += randomized
        stats.masked_tokens += len(positions)
        return MaskedTokens(masked, positions, list(gather(tokens, positions)))

