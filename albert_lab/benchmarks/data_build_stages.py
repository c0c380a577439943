"""The data-prep benchmark's in-process measurements of one worker's loop: each stage's cost
per example, and a cProfile of `ShardBuilder.build` (`albert_lab.benchmarks.data_build` runs
them after the timed builds)."""

from __future__ import annotations

import pathlib
import time


def _options(args):
    from albert_tf.text.options import DataPrepOptions

    return DataPrepOptions(max_seq_length=args.max_seq_length, dupe_factor=args.dupe_factor,
                           max_predictions_per_seq=args.max_predictions_per_seq)


def stage_breakdown(args, corpus: str, model: str, repeats: int = 3) -> dict:
    """Microseconds per example of each stage, the fastest of `repeats` passes (the machine's
    speed drifts from second to second), in this process, on the benchmark corpus."""
    passes = [_stage_pass(args, corpus, model) for _ in range(repeats)]
    return {stage: min(seconds[stage] for seconds in passes) for stage in passes[0]}


def _stage_pass(args, corpus: str, model: str) -> dict:
    """One pass of `stage_breakdown`, with the garbage collector paused as `ShardBuilder`
    pauses it. SentencePiece includes laying its ids out as one array (`ShardTokens`);
    segments include laying each batch of pairs out as `[CLS] A [SEP] B [SEP]` rows
    (`token_matrix`), which masking then takes."""
    import gc
    import random

    import numpy as np

    from albert_tf.text.statistics import ExampleStatistics, InputReport
    from albert_tf.text.vocabulary import SentencePieceTokenizer
    from data_prep.corpus import expand_inputs, plan_parts, read_documents
    from data_prep.instances import document_pairs, pair_table, token_matrix
    from data_prep.shard import ShardBuilder

    options = _options(args)
    builder = ShardBuilder(options, SentencePieceTokenizer(model))
    (whole,) = plan_parts(expand_inputs([corpus]), 1)
    rng, generator, stats, seconds = random.Random(0), np.random.default_rng(0), \
        ExampleStatistics(), {}
    gc.disable()

    def timed(stage, work):
        start = time.perf_counter()
        value = work()
        seconds[stage] = time.perf_counter() - start
        return value
    documents = timed("read and normalize", lambda: [
        document.sentences for document in read_documents(whole, options, InputReport())])
    shard = timed("SentencePiece", lambda: builder.tokenize(documents))

    def segments():  # the pairs in the batches `ShardBuilder.build` masks, laid out as rows
        batches, pairs = [], []
        for _ in range(options.dupe_factor):
            for index in range(shard.num_documents):
                document_pairs(shard, index, options, rng, stats, pairs)
                if len(pairs) >= 2048:
                    batches.append(pairs)
                    pairs = []
        if pairs:
            batches.append(pairs)
        return [(batch, token_matrix(shard, pair_table(batch), options.max_seq_length))
                for batch in batches]
    batches = timed("segments A/B", segments)
    examples = sum(len(batch) for batch, _ in batches)
    masked = timed("masking", lambda: [
        builder.masker.mask_tokens(*matrix, generator, stats) for _, matrix in batches])
    encoded = timed("encoding", lambda: [
        record for m, (batch, _) in zip(masked, batches)
        for record in builder.encoder.encode_batch(
            m.input_ids, m.lengths, m.segment_ids, m.token_boundary, m.positions,
            m.original_ids, m.num_predictions, pair_table(batch)[:, 4].astype(np.uint8))])
    timed("shuffle", lambda: rng.shuffle(encoded))
    timed("framing and hashing", lambda: _frame_and_hash(encoded))
    gc.enable()
    return {stage: round(value / examples * 1e6, 2) for stage, value in seconds.items()}


def _frame_and_hash(records: list[bytes]) -> str:
    """What `write_records` does to each record but the file write: TFRecord framing (two
    CRC32Cs) and the shard's SHA-256."""
    import hashlib

    from albert_tf.records.tfrecord import framed_blocks

    digest = hashlib.sha256()
    for block, _ in framed_blocks(records):
        digest.update(block)
    return digest.hexdigest()


def hot_functions(args, corpus: str, model: str, top: int = 12) -> list[dict]:
    """cProfile of `ShardBuilder.build` (what a worker runs per shard) over the whole corpus
    as one shard: the functions with the most self time, in microseconds per example."""
    import cProfile
    import pstats

    from albert_tf.text.vocabulary import SentencePieceTokenizer
    from data_prep.corpus import expand_inputs, plan_parts
    from data_prep.shard import ShardBuilder

    options = _options(args)
    builder = ShardBuilder(options, SentencePieceTokenizer(model))
    (whole,) = plan_parts(expand_inputs([corpus]), 1)
    profiler = cProfile.Profile()
    records, _ = profiler.runcall(builder.build, whole)
    stats = pstats.Stats(profiler).stats  # (file, line, function) -> (calls, _, self, cum, _)
    rows = sorted(stats.items(), key=lambda item: -item[1][2])[:top]
    return [{"function": f"{pathlib.Path(file).name}:{line}({function})", "calls": calls,
             "self_us_per_example": self_seconds / len(records) * 1e6,
             "cumulative_us_per_example": cumulative / len(records) * 1e6}
            for (file, line, function), (_, calls, self_seconds, cumulative, _) in rows]
