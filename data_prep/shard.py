"""One part of the corpus -> one shard of serialized examples: the per-document recipe in order.

`ShardBuilder.build(part)` reads the part's documents, tokenizes them, makes `dupe_factor`
passes of segment pairs (`instances`), masks (`masking`) and encodes them in batches, and
shuffles the examples; its random generators are seeded from (random_seed, shard index).
The result depends on nothing but the part, the options and the tokenizer, so the
multiprocessing pipeline and the Beam pipeline, with any number of workers, write the same
bytes.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import random

import numpy as np

from albert_tf.text.masking import TokenMasker
from albert_tf.text.options import DataPrepOptions
from albert_tf.text.statistics import ExampleStatistics, ShardStatistics
from albert_tf.text.vocabulary import SentencePieceTokenizer
from data_prep.corpus import Part, read_documents
from data_prep.example_encoding import ExampleEncoder
from data_prep.instances import Pair, ShardTokens, document_pairs, pair_table, token_matrix

_ENCODE_BATCH = 4096  # sentences per SentencePiece call
_MASK_BATCH = 2048  # examples masked and encoded together
_LABEL, _SHORT_TARGET = Pair._fields.index("label"), Pair._fields.index("short_target")


def shard_seed(random_seed: int, shard_index: int) -> int:
    """The seed of one shard's generator: a hash, so neighbouring shards are unrelated."""
    digest = hashlib.sha256(f"albert-data/{random_seed}/{shard_index}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


class ShardBuilder:
    """Turns parts into shuffled, serialized examples; build one per process and reuse it."""

    def __init__(self, options: DataPrepOptions, tokenizer: SentencePieceTokenizer):
        self.options = options
        self.tokenizer = tokenizer
        self.masker = TokenMasker(options, options.max_seq_length,
                                  options.max_predictions_per_seq, tokenizer.vocabulary)
        self.encoder = ExampleEncoder(options.max_seq_length, options.max_predictions_per_seq)

    def tokenized_documents(self, part: Part, stats: ShardStatistics) -> ShardTokens:
        """The part's documents as piece ids (empty sentences and documents dropped)."""
        documents = [document.sentences for document in
                     read_documents(part, self.options, stats.inputs)]
        shard = self.tokenize(documents)
        stats.examples.documents += shard.num_documents
        stats.examples.sentences += shard.num_sentences
        return shard

    def tokenize(self, documents: list[list[str]]) -> ShardTokens:
        """Documents of normalized sentences as `ShardTokens`, `_ENCODE_BATCH` sentences per
        SentencePiece call (on one thread: see `SentencePieceTokenizer._pieces`)."""
        flat = [sentence for document in documents for sentence in document]
        batches = [self.tokenizer.encode_flat(flat[start:start + _ENCODE_BATCH])
                   for start in range(0, len(flat), _ENCODE_BATCH)]
        ids = np.concatenate([ids for ids, _ in batches] or [np.zeros(0, np.int32)])
        lengths = np.concatenate([lengths for _, lengths in batches] or [np.zeros(0, np.int64)])
        return ShardTokens.from_arrays(ids, lengths, [len(document) for document in documents],
                                       self.tokenizer.space_before)

    def build(self, part: Part) -> tuple[list[bytes], ShardStatistics]:
        """Serialized examples of `part`, shuffled, and the statistics of making them."""
        stats = ShardStatistics()
        seed = shard_seed(self.options.random_seed, part.index)
        rng = random.Random(seed)  # segments and the final shuffle
        masking_rng = np.random.default_rng([seed, 1])  # masking, a batch at a time
        records: list[bytes] = []
        pairs: list[tuple] = []
        with _collector_paused():
            shard = self.tokenized_documents(part, stats)
            for _ in range(self.options.dupe_factor):
                for index in range(shard.num_documents):
                    document_pairs(shard, index, self.options, rng, stats.examples, pairs)
                    if len(pairs) >= _MASK_BATCH:
                        records.extend(self.encode_pairs(shard, pairs, masking_rng,
                                                         stats.examples))
                        pairs = []
            if pairs:
                records.extend(self.encode_pairs(shard, pairs, masking_rng, stats.examples))
        rng.shuffle(records)
        return records, stats

    def encode_pairs(self, shard: ShardTokens, pairs: list[tuple], rng: np.random.Generator,
                     stats: ExampleStatistics) -> list[bytes]:
        """Masks a batch of segment pairs of `shard` (tuples of `Pair`'s fields) and
        serializes them, in order."""
        table = pair_table(pairs)
        tokens, lengths, separators = token_matrix(shard, table, self.options.max_seq_length)
        masked = self.masker.mask_tokens(tokens, lengths, separators, rng, stats)
        labels = table[:, _LABEL].astype(np.uint8)
        stats.examples += len(pairs)
        stats.tokens += int(masked.lengths.sum())
        stats.full_length_examples += int((masked.lengths == self.options.max_seq_length).sum())
        stats.short_target_examples += int(table[:, _SHORT_TARGET].sum())
        for label, count in enumerate(np.bincount(labels).tolist()):
            if count:
                stats.count_label(label, count)
        return self.encoder.encode_batch(masked.input_ids, masked.lengths, masked.segment_ids,
                                         masked.token_boundary, masked.positions,
                                         masked.original_ids, masked.num_predictions, labels)


@contextlib.contextmanager
def _collector_paused():
    """Pauses Python's cyclic garbage collector: reading, tokenizing and the example loop
    make no reference cycles, and without the pause the collector re-scans the shard's
    documents each time their many new lists trigger it (~15% of tokenizing a shard, more in
    a process holding many objects, such as one that imported TensorFlow)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
