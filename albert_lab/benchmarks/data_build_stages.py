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
    from data_prep.instances import Pair, document_pairs, pair_table, token_matrix
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
        tables = [pair_table(batch) for batch in batches]
        return [(table, token_matrix(shard, table, options.max_seq_length))
                for table in tables]
    batches = timed("segments A/B", segments)
    examples = sum(len(table) for table, _ in batches)
    masked = timed("masking", lambda: [
        builder.masker.mask_tokens(*matrix, generator, stats) for _, matrix in batches])
    encoded = timed("encoding", lambda: [
        record for m, (table, _) in zip(masked, batches)
        for record in builder.encoder.encode_batch(
            m.input_ids, m.lengths, m.segment_ids, m.token_boundary, m.positions,
            m.original_ids, m.num_predictions,
            table[:, Pair._fields.index("label")].astype(np.uint8))])
    timed("shuffle", lambda: rng.shuffle(encoded))
    timed("framing and hashing", lambda: _framed_and_hashed(encoded))
    gc.enable()
    return {stage: round(value / examples * 1e6, 2) for stage, value in seconds.items()}


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


def worker_phases(args, corpus: str, model: str, output: str, num_shards: int,
                  shards: int = 16) -> dict:
    """Where one worker's time goes beyond the stages, in this process: the first `shards`
    of the `num_shards` shards of a build of `corpus` (the timed build's plan), made as
    `build_and_record_shard` makes them with each phase timed apart: building the examples
    (`ShardBuilder.build`), TFRecord framing with the shard's SHA-256, writing the file
    (write, fsync, rename) and the sidecar. Per example: microseconds of wall, user and
    system time and minor page faults of each phase; and the garbage collector's passes and
    microseconds over the whole loop (`gc.callbacks`)."""
    import gc
    import resource

    from albert_tf.io.files import atomic_output
    from data_prep import manifest as manifest_files
    from data_prep.pipeline import make_plan, shard_builder_for

    plan = make_plan([corpus], output, model, _options(args), num_shards, resume=False)
    builder = shard_builder_for(plan)
    totals: dict[str, list[float]] = {}
    collector = {"passes": 0, "seconds": 0.0}

    def on_collection(phase, info):
        if phase == "start":
            collector["started"] = time.perf_counter()
        else:
            collector["passes"] += 1
            collector["seconds"] += time.perf_counter() - collector["started"]

    def timed(phase, work):
        before = (time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF))
        value = work()
        after = (time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF))
        spent = (after[0] - before[0], after[1].ru_utime - before[1].ru_utime,
                 after[1].ru_stime - before[1].ru_stime, after[1].ru_minflt - before[1].ru_minflt)
        totals[phase] = [total + value for total, value in zip(totals.get(phase, [0] * 4), spent)]
        return value

    def write(path, blocks):
        with atomic_output(path) as file:
            for block in blocks:
                file.write(block)

    examples = 0
    gc.callbacks.append(on_collection)
    try:
        for index in range(min(shards, plan.num_shards)):
            records, stats = timed("build", lambda: builder.build(plan.parts[index]))
            blocks = timed("framing and hashing", lambda: _framed_and_hashed(records))
            timed("writing (write, fsync, rename)",
                  lambda: write(plan.shard_path(index), blocks[0]))
            timed("sidecar", lambda: manifest_files.write_sidecar(
                plan, index, len(records), blocks[1], stats))
            examples += len(records)
            records = blocks = None  # freed before the next shard, as in a build
    finally:
        gc.callbacks.remove(on_collection)
    per_example = {phase: {"wall_us": wall / examples * 1e6, "user_us": user / examples * 1e6,
                           "system_us": system / examples * 1e6,
                           "minor_page_faults": faults / examples}
                   for phase, (wall, user, system, faults) in totals.items()}
    return {"shards": min(shards, plan.num_shards), "examples": examples,
            "per_example": per_example, "garbage_collector_passes": collector["passes"],
            "garbage_collector_us_per_example": collector["seconds"] / examples * 1e6}


def _framed_and_hashed(records: list[bytes]) -> tuple[list[bytes], str]:
    """What `write_records` does to the records but the file write: TFRecord framing (two
    CRC32Cs a record) and the shard's SHA-256; returns the framed blocks and the checksum."""
    import hashlib

    from albert_tf.records.tfrecord import framed_blocks

    blocks = [block for block, _ in framed_blocks(records)]
    digest = hashlib.sha256()
    for block in blocks:
        digest.update(block)
    return blocks, "sha256:" + digest.hexdigest()
