"""One part of the corpus -> one shard of serialized examples: the per-document recipe in order.

`ShardBuilder.build(part)` reads the part's documents, tokenizes them, makes `dupe_factor`
passes of segment pairs (`instances`) and masks (`masking`) with one random generator seeded
from (random_seed, shard index), encodes the examples and shuffles them. The result depends on
nothing but the part, the options and the tokenizer, so the multiprocessing pipeline and the
Beam pipeline, with any number of workers, write the same bytes.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import random

from data_prep.corpus import Part, read_documents
from data_prep.example_encoding import ExampleEncoder, gather
from data_prep.instances import SegmentPair, document_pairs
from data_prep.masking import TokenMasker
from data_prep.options import DataPrepOptions
from data_prep.statistics import ExampleStatistics, ShardStatistics
from data_prep.tokenizer import Tokenizer

_ENCODE_BATCH = 4096  # sentences per SentencePiece call


def shard_seed(random_seed: int, shard_index: int) -> int:
    """The seed of one shard's generator: a hash, so neighbouring shards are unrelated."""
    digest = hashlib.sha256(f"albert-data/{random_seed}/{shard_index}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


class ShardBuilder:
    """Turns parts into shuffled, serialized examples; build one per process and reuse it."""

    def __init__(self, options: DataPrepOptions, tokenizer: Tokenizer):
        self.options = options
        self.tokenizer = tokenizer
        self.masker = TokenMasker(options, tokenizer.vocabulary)
        self.encoder = ExampleEncoder(tokenizer.vocab_size, options.max_seq_length,
                                      options.max_predictions_per_seq)

    def tokenized_documents(self, part: Part, stats: ShardStatistics) -> list[list[list[int]]]:
        """The part's documents as lists of sentences of piece ids (empty ones dropped)."""
        documents = [document.sentences for document in
                     read_documents(part, self.options, stats.inputs)]
        flat = [sentence for document in documents for sentence in document]
        ids = []
        for start in range(0, len(flat), _ENCODE_BATCH):
            ids.extend(self.tokenizer.encode(flat[start:start + _ENCODE_BATCH]))
        tokenized, cursor = [], 0
        for document in documents:
            sentences = [piece_ids for piece_ids in ids[cursor:cursor + len(document)] if piece_ids]
            cursor += len(document)
            if sentences:
                tokenized.append(sentences)
        stats.examples.documents += len(tokenized)
        stats.examples.sentences += sum(len(document) for document in tokenized)
        return tokenized

    def build(self, part: Part) -> tuple[list[bytes], ShardStatistics]:
        """Serialized examples of `part`, shuffled, and the statistics of making them."""
        stats = ShardStatistics()
        documents = self.tokenized_documents(part, stats)
        rng = random.Random(shard_seed(self.options.random_seed, part.index))
        records = []
        with _collector_paused():
            for _ in range(self.options.dupe_factor):
                for index in range(len(documents)):
                    for pair in document_pairs(documents, index, self.options, rng,
                                               stats.examples):
                        records.append(self.encode_pair(pair, rng, stats.examples))
        rng.shuffle(records)
        return records, stats

    def encode_pair(self, pair: SegmentPair, rng: random.Random,
                    stats: ExampleStatistics) -> bytes:
        """Masks one segment pair and serializes it."""
        tokens = pair.tokens()
        boundary = bytes(gather(self.tokenizer.vocabulary.word_start, tokens))
        masked = self.masker.mask(tokens, len(pair.first) + 1, rng, stats, boundary)
        stats.examples += 1
        stats.tokens += len(tokens)
        stats.full_length_examples += len(tokens) == self.options.max_seq_length
        stats.short_target_examples += pair.short_target
        stats.count_label(pair.label)
        return self.encoder.encode(masked.tokens, pair.segment_ids(), boundary,
                                   masked.positions, masked.original_ids, pair.label)


@contextlib.contextmanager
def _collector_paused():
    """Pauses Python's cyclic garbage collector: the example loop makes no reference cycles,
    and without the pauses it spends ~2% of its time re-scanning the shard's documents."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
