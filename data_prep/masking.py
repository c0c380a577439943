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

    def draw_length(self, rng: random.Random) -> int:
        return bisect.bisect_right(self.cumulative, rng.random()) + 1

    def words(self, tokens: list[int], first_separator: int) -> tuple[list[int], list[int]]:
        """Begin and end piece positions of the maskable words, in order.

        A word starts at a word-start piece (every piece, without whole-word masking) and at
        the first piece of each segment; it ends before the next word or the `[SEP]`.
        """
        last = len(tokens) - 1
        if self.options.whole_word_mask:
            # [CLS] and [SEP] are word starts in the table; they bound words but are not words.
            flags = map(self.word_start.__getitem__, tokens)
            boundaries = list(itertools.compress(range(len(tokens)), flags))
            begins = [p for p in boundaries[1:-1] if p != first_separator]
            if not begins or begins[0] != 1:
                begins.insert(0, 1)
            second = first_separator + 1
            if second < last:
                index = bisect.bisect_left(begins, second)
                if index == len(begins) or begins[index] != second:
                    begins.insert(index, second)
        else:
            begins = [p for p in range(1, last) if p != first_separator]
        ends = begins[1:] + [last]
        for word, begin in enumerate(begins):
            if begin < first_separator < ends[word]:
                ends[word] = first_separator
                break
        return begins, ends

    def mask(self, tokens: list[int], first_separator: int, rng: random.Random,
             stats: ExampleStatistics) -> MaskedTokens:
        begins, ends = self.words(tokens, first_separator)
        budget = self.budget(len(tokens))
        order = _RandomOrder(len(begins), rng)
        covered = bytearray(len(begins))
        segment_of = [begin > first_separator for begin in begins]
        positions: list[int] = []
        # While the budget could hold the longest possible span, no span is shortened, so
        # the spans placed then have exactly the drawn lengths; statistics count them apart.
        ngram = self.options.ngram
        longest = max(map(operator.sub, ends[ngram - 1:] + [ends[-1]] * (ngram - 1), begins))
        pending = self.draw_length(rng)
        for start in order:
            if budget == 0:
                break
            stop = start + pending
            if (stop > len(begins) or segment_of[stop - 1] != segment_of[start]
                    or any(covered[start:stop])):
                continue
            length = pending
            unconstrained = budget >= longest
            while length and ends[start + length - 1] - begins[start] > budget:
                length -= 1
            if not length:
                continue
            budget -= self._cover(start, length, begins, ends, covered, positions)
            stats.count_span(length, unconstrained)
            pending = self.draw_length(rng)
        for start in order.consumed() if budget else ():
            if budget == 0:
                break
            if not covered[start] and ends[start] - begins[start] <= budget:
                budget -= self._cover(start, 1, begins, ends, covered, positions)
                stats.count_span(1, unconstrained=False)
        positions.sort()
        return self._replace(tokens, positions, rng, stats)

    @staticmethod
    def _cover(start, length, begins, ends, covered, positions) -> int:
        covered[start:start + length] = b"\x01" * length
        positions.extend(range(begins[start], ends[start + length - 1]))
        return ends[start + length - 1] - begins[start]

    def _replace(self, tokens, positions, rng, stats) -> MaskedTokens:
        masked = list(tokens)
        ordinary = self.ordinary_ids
        for position in positions:
            draw = rng.random()
            if draw < 0.8:
                masked[position] = MASK_ID
                stats.replaced_by_mask += 1
            elif draw < 0.9:
                stats.kept_original += 1
            else:
                masked[position] = ordinary[rng.randrange(len(ordinary))]
                stats.replaced_by_random += 1
        stats.masked_tokens += len(positions)
        return MaskedTokens(masked, positions, [tokens[position] for position in positions])


class _RandomOrder:
    """A random permutation of range(n), shuffled lazily (Fisher-Yates, one step per item).

    Masking looks at a dozen start words of a hundred, so shuffling only what is read saves
    most of the draws; `consumed()` then replays the same order in full.
    """

    def __init__(self, size: int, rng: random.Random):
        self.items = list(range(size))
        self.random = rng.random
        self.taken = 0

    def __iter__(self):
        items, size = self.items, len(self.items)
        while self.taken < size:
            k = self.taken
            j = k + int(self.random() * (size - k))
            items[k], items[j] = items[j], items[k]
            self.taken += 1
            yield items[k]

    def consumed(self):
        """The whole permutation: the items already drawn, then the rest drawn now."""
        yield from self.items[:self.taken]
        yield from self
