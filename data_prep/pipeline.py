"""`albert-data build` (plan the shards, build the missing ones in parallel, write the manifest)
and `albert-data train-spm` (a SentencePiece model from the same text reader).

Workers are separate processes (multiprocessing, `spawn`, so they never inherit a parent's
TensorFlow threads); each builds whole shards with its own `ShardBuilder` and writes them
atomically. A rerun after a crash, or with more or fewer workers, finds the complete shards
by their sidecars, builds the rest and gives the same bytes.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from typing import Sequence

from albert_tf.io import files
from albert_tf.io.names import plain_name
from albert_tf.io.processes import safe_import_path
from albert_tf.records.tfrecord import write_records
from albert_tf.text.options import DataPrepError, DataPrepOptions
from albert_tf.text.statistics import InputReport
from albert_tf.text.vocabulary import SentencePieceTokenizer, train_sentencepiece
from data_prep import manifest as manifest_files
from data_prep.corpus import Source, expand_inputs, plan_parts, read_documents
from data_prep.shard import ShardBuilder

# Default shard size: one shard per this many input bytes times dupe_factor. A worker holds
# one shard in memory: its documents as token lists (about 7 bytes per input byte) and its
# serialized examples, to shuffle them (about 1.6 bytes per input byte and dupe at seq 128;
# measured on the Python docs corpus). So a default shard costs at most ~300 MB (dupe 1).
INPUT_BYTES_PER_SHARD = 32 << 20


def default_num_shards(sources: Sequence[Source], dupe_factor: int, num_workers: int = 1) -> int:
    """One shard per INPUT_BYTES_PER_SHARD of input times dupe_factor, and at least one per
    worker (a worker builds whole shards, so fewer shards would leave workers idle)."""
    total = sum(source.size for source in sources)
    return max(num_workers, math.ceil(total * dupe_factor / INPUT_BYTES_PER_SHARD))


def make_plan(inputs: Sequence[str], output_dir: str, spm_model: str, options: DataPrepOptions,
              num_shards: int = 0, tfds_sources: Sequence[Source] = (),
              prefix: str = "train", num_workers: int = 1,
              resume: bool = True) -> manifest_files.BuildPlan:
    """Resolves inputs and the tokenizer into a `BuildPlan` (checks everything up front).

    `num_shards` 0 chooses the count: the one of the build already in `output_dir` when
    resuming it (so a rerun with another worker count finds its shards), else
    `default_num_shards`.
    """
    plain_name(prefix, "option prefix", DataPrepError)
    if files.has_magic(prefix):
        raise DataPrepError(f"option prefix: {prefix!r} holds a glob character (*, ? or [); "
                            "the shards' names are matched by globs")
    sources = [*expand_inputs(list(inputs)), *tfds_sources]
    if not sources:
        raise DataPrepError("no inputs: pass text files or globs, or a TFDS dataset")
    if num_shards < 0:
        raise DataPrepError(f"option num_shards must be >= 0 (0 = automatic), got {num_shards}")
    spm_model = spm_model if files.is_remote(spm_model) else os.path.abspath(spm_model)
    tokenizer = SentencePieceTokenizer(spm_model)
    _planned_tokenizers[tokenizer.checksum] = tokenizer  # an in-process build reuses it
    num_shards = (num_shards or (resume and manifest_files.planned_shard_count(output_dir))
                  or default_num_shards(sources, options.dupe_factor, num_workers))
    parts = plan_parts(sources, num_shards)
    return manifest_files.BuildPlan(output_dir, sources, parts, options, spm_model,
                                    tokenizer.checksum, tokenizer.vocab_size, prefix)


def train_tokenizer(inputs: Sequence[str], model_prefix: str, vocab_size: int,
                    options: DataPrepOptions = DataPrepOptions(), max_sentences: int = 2_000_000,
                    seed: int = 12345, character_coverage: float = 0.99995,
                    num_threads: int = 1) -> tuple[str, InputReport]:
    """`albert-data train-spm`: a SentencePiece model trained on the sentences of text files
    (or globs) in the original format, read and normalized the way `build` reads them.

    Returns the `.model` path and the report of skipped input lines."""
    report = InputReport()
    (everything,) = plan_parts(expand_inputs(list(inputs)), 1)
    sentences = (sentence for document in read_documents(everything, options, report)
                 for sentence in document.sentences)
    path = train_sentencepiece(sentences, model_prefix, vocab_size, max_sentences, seed,
                               character_coverage, num_threads)
    return path, report


def build_shards(plan: manifest_files.BuildPlan, num_workers: int = 1, overwrite: bool = False,
                 progress: bool = True) -> dict:
    """Builds every incomplete shard of `plan`, then writes and returns the manifest, holding
    the output folder meanwhile (`manifest.owned_output`; `overwrite` deletes the files an
    earlier build recorded there first, and nothing else)."""
    if num_workers < 1:
        raise DataPrepError(f"option num_workers must be >= 1, got {num_workers}")
    with manifest_files.owned_output(plan, overwrite):
        manifest_files.start_build(plan)
        files.remove_stale_temporaries(plan.output_dir)
        todo = manifest_files.incomplete_shards(plan)
        bar = _progress_bar(plan, todo, progress)
        try:
            for examples in _run(plan, todo, num_workers):
                bar.update(1)
                bar.set_postfix(examples=f"{examples:,}")
        except BaseException:
            # Stopped workers may leave temporaries; complete shards and sidecars stay.
            files.remove_stale_temporaries(plan.output_dir)
            raise
        finally:
            bar.close()
        return manifest_files.finish_build(plan)


def _progress_bar(plan, todo, enabled):
    from tqdm import tqdm
    done = plan.num_shards - len(todo)
    return tqdm(total=plan.num_shards, initial=done, unit="shard", disable=not enabled,
                desc=f"albert-data build -> {plan.output_dir}")


def _run(plan, todo, num_workers):
    """Yields the example count of each shard as it completes."""
    if num_workers == 1 or len(todo) <= 1:
        _start_worker(plan, _planned_tokenizers.get(plan.tokenizer_checksum))
        for index in todo:
            yield _build_one(index)
        return
    context = multiprocessing.get_context("spawn")
    with safe_import_path():  # the workers never import from the working folder
        pool = context.Pool(min(num_workers, len(todo)), initializer=_start_worker,
                            initargs=(plan,))
    with pool:
        yield from pool.imap_unordered(_build_one, todo)


def shard_builder_for(plan: manifest_files.BuildPlan,
                      tokenizer: SentencePieceTokenizer | None = None) -> ShardBuilder:
    """The builder a worker uses for `plan`, with the tokenizer the plan was made with."""
    tokenizer = tokenizer or SentencePieceTokenizer(plan.tokenizer_path)
    if tokenizer.checksum != plan.tokenizer_checksum:
        raise DataPrepError(f"{plan.tokenizer_path} changed since the build was planned")
    return ShardBuilder(plan.options, tokenizer)


def build_and_record_shard(plan: manifest_files.BuildPlan, builder: ShardBuilder,
                           index: int) -> int:
    """Builds shard `index`, writes it, then its sidecar (which marks it complete)."""
    records, stats = builder.build(plan.parts[index])
    examples, checksum = write_records(plan.shard_path(index), records)
    manifest_files.write_sidecar(plan, index, examples, checksum, stats)
    return examples


_worker: dict = {}
_planned_tokenizers: dict[str, SentencePieceTokenizer] = {}


def _start_worker(plan: manifest_files.BuildPlan,
                  tokenizer: SentencePieceTokenizer | None = None) -> None:
    _worker.update(plan=plan, builder=shard_builder_for(plan, tokenizer))


def _build_one(index: int) -> int:
    return build_and_record_shard(_worker["plan"], _worker["builder"], index)
