"""Data prep throughput: examples/s of `albert-data build` for 1 and 2 workers, peak memory.

    sudo apt-get install python3.11-doc        # the corpus: Python's documentation sources
    python -m albert_lab.benchmarks.data_build            # seq 128, dupe 2, as the reference figure
    python -m albert_lab.benchmarks.data_build --source king-james-bible   # sword-text-kjv
    python -m albert_lab.benchmarks.data_build --corpus my_corpus.txt --workers 1,2,4

The corpus is real English assembled from what is on the machine: by default the
reStructuredText sources of the Python 3.11 documentation from Debian's `python3.11-doc`
package (/usr/share/doc/python3.11/html/_sources, about 7 MB of prose after markup is
removed; see `albert_lab.corpora.local_corpus`, whose other sources `--source` names), built
from 4 copies of it so a run lasts long enough for process start-up not to count. A
SentencePiece model is trained on it first (not timed; 16,000 pieces, as much as a 7 MB
corpus supports). Each build runs as its own process, timed end
to end (reading, normalization, SentencePiece, segments, masking, serialization, writing,
manifest), and its peak RSS is that of the largest process of its tree. The rate of the
original create_pretraining_data.py is not measured here (it needs TF 1.x); the reference
figure is the project's: about 400 examples/s in one process at seq 128, dupe 2.
Then, in this process, the stages are timed one by one (microseconds per example, the
fastest of three passes); the first 16 shards of the timed build are made again with each
phase of a worker timed apart (building, framing and hashing, writing, the sidecar: wall,
user and system time, page faults, the garbage collector), which shows where a worker's time
goes beyond the sum of the stages; and `ShardBuilder.build` runs once more under cProfile,
whose functions with the most self time are recorded: the profile of the hot loop (before
TensorFlow is imported, so that no thread of its shares the CPU with the profiled loop).
Last, the training input pipeline (`albert_tf.data.pretraining`) reads the shards back:
examples/s with the written masks and with dynamic re-masking.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from albert_lab.benchmarks import common
from albert_lab.benchmarks.data_build_stages import hot_functions, stage_breakdown, worker_phases
from albert_lab.result_files import write_result

ORIGINAL_EXAMPLES_PER_SECOND = 400  # reference figure for the original script, one process
FORWARD = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"
# Runs `albert-data build` in this child process and reports, at exit, its wall time, the CPU
# seconds of it and its workers (so cores used = CPU / wall: one worker must keep to one core),
# its own peak RSS (the launching process: the plan, the progress, the manifest; with one
# worker it builds the shards itself) and the largest peak RSS of its worker processes.
MEASURE = """
import atexit, json, resource, runpy, sys, time
start = time.perf_counter()

def report():
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                          resource.RUSAGE_CHILDREN))
    print(json.dumps({"seconds": time.perf_counter() - start,
                      "cpu_seconds": sum(usage.ru_utime + usage.ru_stime
                                         for usage in (own, children)),
                      "launcher_peak_rss_kib": own.ru_maxrss,
                      "worker_peak_rss_kib": children.ru_maxrss}))

atexit.register(report)
sys.argv = ["albert-data", *sys.argv[1:]]
runpy.run_module("data_prep.cli", run_name="__main__")
"""


def prepare(args, folder: str) -> tuple[str, str, dict]:
    """The corpus (`--corpus`, or the Python documentation's prose) and a SentencePiece model
    trained on it; returns the corpus path, the model path and a description."""
    from albert_lab.corpora.local_corpus import make_corpus
    from albert_tf.text.options import DataPrepOptions
    from albert_tf.text.statistics import InputReport
    from albert_tf.text.vocabulary import train_sentencepiece
    from data_prep.corpus import expand_inputs, plan_parts, read_documents

    if args.corpus:
        corpus = {"path": args.corpus, "bytes": os.path.getsize(args.corpus),
                  "source": args.corpus}
    else:
        corpus = make_corpus(args.source, os.path.join(folder, f"{args.source}.txt"))
    (whole,) = plan_parts(expand_inputs([corpus["path"]]), 1)
    sentences = (sentence for document in read_documents(whole, DataPrepOptions(),
                                                         InputReport())
                 for sentence in document.sentences)
    model = train_sentencepiece(sentences, os.path.join(folder, "spm"), args.vocab_size,
                                num_threads=os.cpu_count() or 1)
    return corpus["path"], model, corpus


def repeated(corpus: str, copies: int, folder: str) -> str:
    """A file of `copies` copies of `corpus` (longer runs, so that process start-up, about
    0.3 s, does not weigh on the rate; and larger inputs, for the memory scan)."""
    if copies == 1:
        return corpus
    with open(corpus, "rb") as file:
        text = file.read()
    path = os.path.join(folder, f"corpus-x{copies}.txt")
    with open(path, "wb") as file:
        for _ in range(copies):
            file.write(text)
    return path


def run_build(args, corpus: str, model: str, output: str, workers: int) -> dict:
    command = ["build", "--input", corpus,
               "--spm_model", model, "--output_dir", output, "--overwrite", "--no_progress",
               "--max_seq_length", str(args.max_seq_length), "--dupe_factor",
               str(args.dupe_factor), "--max_predictions_per_seq",
               str(args.max_predictions_per_seq), "--num_shards", str(num_shards(args)),
               "--num_workers", str(workers)]
    # Run from the output's folder: from this one, `-m data_prep` would find this script.
    # Through a small intermediate process: Linux carries a process's peak RSS over exec, so
    # a child forked from this (large) process would report this process's size as its own.
    measured = subprocess.run([sys.executable, "-c", FORWARD, sys.executable, "-c", MEASURE,
                               *command],
                              capture_output=True, text=True, cwd=os.path.dirname(output))
    if measured.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{measured.stderr[-3000:]}")
    timing = json.loads(measured.stdout.strip().splitlines()[-1])
    with open(os.path.join(output, "manifest.json")) as file:
        manifest = json.load(file)
    examples = manifest["total_examples"]
    rate = examples / timing["seconds"]
    # One worker: the launching process builds the shards itself.
    worker_kib = timing["worker_peak_rss_kib"] if workers > 1 else timing["launcher_peak_rss_kib"]
    return {"workers": workers, "shards": len(manifest["shards"]), "examples": examples,
            "seconds": timing["seconds"], "cpu_seconds": timing["cpu_seconds"],
            "cores_used": timing["cpu_seconds"] / timing["seconds"],
            "examples_per_second": rate, "examples_per_second_per_worker": rate / workers,
            "times_original_per_worker": rate / workers / ORIGINAL_EXAMPLES_PER_SECOND,
            "peak_rss_mib": max(timing["launcher_peak_rss_kib"], worker_kib) / 1024,
            "worker_peak_rss_mib": worker_kib / 1024,
            "launcher_peak_rss_mib": timing["launcher_peak_rss_kib"] / 1024,
            "masked_fraction": manifest["statistics"]["summary"]["masked_fraction_of_tokens"],
            "checksums": [shard["checksum"] for shard in manifest["shards"]]}


def num_shards(args) -> int:
    """`--num_shards`, or `--shards_per_copy` per copy of the corpus: shards of the same size
    whatever the copy count, as the default shard count (one per 32 MB of input times dupe)
    keeps them on a large corpus."""
    return args.num_shards or args.shards_per_copy * args.copies


def input_pipeline_rates(args, shards: str, vocab_size: int, batches: int = 60,
                         batch_size: int = 256) -> dict:
    """Examples/s of the training input pipeline (`albert_tf.data.pretraining`: interleaved
    reads, shuffling, parsing, AUTOTUNE maps, prefetch) over the built shards, with the masks
    as written and with dynamic re-masking, after a warm-up of 5 batches."""
    import tensorflow as tf

    from albert_tf.data.pretraining import PretrainingDataConfig, pretraining_dataset

    rates = {}
    for dynamic in (False, True):
        config = PretrainingDataConfig(
            file_patterns=[os.path.join(shards, "*.tfrecord")],
            max_seq_length=args.max_seq_length,
            max_predictions_per_seq=args.max_predictions_per_seq, global_batch_size=batch_size,
            seed=0, dynamic_masking=dynamic, vocab_size=vocab_size)
        iterator = iter(pretraining_dataset(config))
        for _ in range(5):
            tf.nest.map_structure(lambda t: t.numpy(), next(iterator))
        start = time.perf_counter()
        for _ in range(batches):
            tf.nest.map_structure(lambda t: t.numpy(), next(iterator))
        name = "dynamic_masking" if dynamic else "static_masks"
        rates[name] = batches * batch_size / (time.perf_counter() - start)
    return rates


def inspect_rates(args, shards: str, single_records: int = 2000) -> dict:
    """Records/s of `albert-data inspect`'s statistics pass over the largest shard (batched
    decoding, numpy counts; TensorFlow's start-up and the first batch not counted), beside
    the one-record-at-a-time eager decoding it replaced (over `single_records` records)."""
    import glob

    from albert_tf.records.features import decode_record
    from data_prep.inspect_shards import RecordStatistics, read_batches

    shard = max(glob.glob(os.path.join(shards, "*.tfrecord")), key=os.path.getsize)
    batches = read_batches(shard, args.max_seq_length, args.max_predictions_per_seq)
    stats = RecordStatistics()
    stats.add(next(batches))
    first, start = stats.counts.examples, time.perf_counter()
    for batch in batches:
        stats.add(batch)
    batched = (stats.counts.examples - first) / (time.perf_counter() - start)

    import tensorflow as tf
    records = iter(tf.data.TFRecordDataset(shard).take(single_records + 10))
    for _ in range(10):
        decode_record(next(records), args.max_seq_length, args.max_predictions_per_seq)
    start = time.perf_counter()
    for record in records:
        {name: tensor.numpy() for name, tensor in decode_record(
            record, args.max_seq_length, args.max_predictions_per_seq).items()}
    one_by_one = single_records / (time.perf_counter() - start)
    return {"records": stats.counts.examples, "batched_records_per_second": batched,
            "one_record_at_a_time_records_per_second": one_by_one}


HEADER = (f"{'workers':>7}{'examples':>10}{'seconds':>9}{'cores':>7}{'ex/s':>9}"
          f"{'ex/s/worker':>13}{'x original':>12}{'peak RSS MiB':>14}")


def format_row(row: dict) -> str:
    return (f"{row['workers']:>7}{row['examples']:>10,}{row['seconds']:>9.2f}"
            f"{row['cores_used']:>7.2f}{row['examples_per_second']:>9,.0f}"
            f"{row['examples_per_second_per_worker']:>13,.0f}"
            f"{row['times_original_per_worker']:>12.1f}{row['peak_rss_mib']:>14.0f}")


def serial_part(args, corpus: str, model: str, built: str) -> dict:
    """Seconds of the work outside the workers, which more workers do not shorten: starting
    Python and importing the CLI, planning (the tokenizer loaded, the inputs cut into parts),
    the worker pool's start (spawned processes loading the tokenizer; 2 workers), and the
    manifest (reading every sidecar, merging the statistics) over the folder `built`."""
    from albert_tf.text.options import DataPrepOptions
    from data_prep import manifest as manifest_files
    from data_prep.pipeline import _start_worker, make_plan

    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import data_prep.cli"], check=True,
                   cwd=os.path.dirname(built))
    seconds = {"python start and imports": time.perf_counter() - start}
    options = DataPrepOptions(max_seq_length=args.max_seq_length, dupe_factor=args.dupe_factor,
                              max_predictions_per_seq=args.max_predictions_per_seq)
    start = time.perf_counter()
    plan = make_plan([corpus], built, model, options, num_shards(args))
    seconds["plan"] = time.perf_counter() - start
    import multiprocessing
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(2, _start_worker, (plan,)) as pool:
        pool.map(abs, [0, 0])
    seconds["worker pool start (2 workers)"] = time.perf_counter() - start
    start = time.perf_counter()
    manifest_files.finish_build(plan)
    seconds["manifest"] = time.perf_counter() - start
    return seconds


def speed(args, folder: str) -> dict:
    """Examples/s with each worker count, stage costs, the serial part, the profile."""
    base, model, corpus_info = prepare(args, folder)
    corpus = repeated(base, args.copies, folder)
    corpus_info["copies"] = args.copies
    print(f"corpus: {corpus_info['source']} ({corpus_info['bytes'] / 1e6:.1f} MB, "
          f"{args.copies} copies); seq {args.max_seq_length}, dupe {args.dupe_factor}, "
          f"{num_shards(args)} shards")
    print(HEADER)
    rows = []
    for workers in (int(count) for count in args.workers.split(",")):
        rows.append(run_build(args, corpus, model, os.path.join(folder, f"out{workers}"),
                              workers))
        print(format_row(rows[-1]), flush=True)
    built = os.path.join(folder, f"out{rows[0]['workers']}")
    serial = serial_part(args, corpus, model, built)
    breakdown = stage_breakdown(args, base, model)
    phases = worker_phases(args, corpus, model, os.path.join(folder, "phases"), num_shards(args))
    hot = hot_functions(args, base, model)  # before TensorFlow's threads start (below)
    reading = input_pipeline_rates(args, built, args.vocab_size)
    inspecting = inspect_rates(args, built)
    identical = len({tuple(row.pop("checksums")) for row in rows}) == 1
    print(f"shards identical across worker counts: {identical}")
    print("serial part (seconds): " + ", ".join(f"{name} {value:.2f}"
                                                for name, value in serial.items()))
    print("microseconds per example by stage (one process): " +
          ", ".join(f"{stage} {value:.1f}" for stage, value in breakdown.items()))
    print(f"one worker's phases over {phases['shards']} shards (us/example: wall, user, "
          "system; minor page faults): " + ", ".join(
              f"{name} {row['wall_us']:.2f}, {row['user_us']:.2f}, {row['system_us']:.2f}; "
              f"{row['minor_page_faults']:.3f}" for name, row in phases["per_example"].items())
          + f"; garbage collector {phases['garbage_collector_passes']} passes, "
          f"{phases['garbage_collector_us_per_example']:.3f} us/example")
    print("training input pipeline over these shards (examples/s, batch 256): " +
          ", ".join(f"{name} {rate:,.0f}" for name, rate in reading.items()))
    print(f"albert-data inspect statistics over a shard of {inspecting['records']:,} records: "
          f"{inspecting['batched_records_per_second']:,.0f} records/s (one record at a time, "
          f"as before: {inspecting['one_record_at_a_time_records_per_second']:,.0f})")
    print("hottest functions under cProfile (self microseconds per example; cProfile's own "
          "cost inflates Python calls): " + ", ".join(
              f"{row['function']} {row['self_us_per_example']:.1f}" for row in hot[:8]))
    return {"corpus": corpus_info, "identical_across_workers": identical, "rows": rows,
            "serial_seconds": serial, "microseconds_per_example_by_stage": breakdown,
            "worker_phases": phases,
            "profile_hot_functions": hot, "input_pipeline_examples_per_second": reading,
            "inspect_statistics": inspecting}


def memory_scan(args, folder: str) -> dict:
    """Peak RSS of the launching process and of the largest worker for each copy count and
    worker count, the shards the same size throughout (`num_shards`)."""
    base, model, corpus_info = prepare(args, folder)
    print(f"corpus: {corpus_info['source']} ({corpus_info['bytes'] / 1e6:.1f} MB); seq "
          f"{args.max_seq_length}, dupe {args.dupe_factor}, {args.shards_per_copy} shards a copy")
    print(f"{'copies':>6}{'shards':>8}{'workers':>8}{'examples':>11}{'seconds':>9}"
          f"{'worker MiB':>12}{'launcher MiB':>14}")
    rows = []
    for copies in (int(count) for count in args.memory_copies.split(",")):
        args.copies = copies
        corpus = repeated(base, copies, folder)
        for workers in (int(count) for count in args.workers.split(",")):
            row = run_build(args, corpus, model, os.path.join(folder, "out"), workers)
            row.pop("checksums")
            rows.append({"copies": copies, **row})
            print(f"{copies:>6}{row['shards']:>8}{workers:>8}{row['examples']:>11,}"
                  f"{row['seconds']:>9.2f}{row['worker_peak_rss_mib']:>12.1f}"
                  f"{row['launcher_peak_rss_mib']:>14.1f}", flush=True)
        if corpus != base:
            os.remove(corpus)
    growth = {}
    for workers in {row["workers"] for row in rows}:
        mine = [row for row in rows if row["workers"] == workers]
        for role in ("worker", "launcher"):
            peaks = [row[f"{role}_peak_rss_mib"] for row in mine]
            growth[f"{role}, {workers} worker(s)"] = max(peaks) / peaks[0] - 1
    print("growth of the peak from the fewest to the most copies: " + ", ".join(
        f"{name} {value:+.1%}" for name, value in sorted(growth.items())))
    return {"corpus": corpus_info, "memory_rows": rows, "peak_growth": growth}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=None, help="a text file in the original format "
                        "(default: made from --source)")
    parser.add_argument("--source", default="python-docs", help="the corpus source installed "
                        "on this machine (albert_lab.corpora.local_corpus.SOURCES), e.g. "
                        "king-james-bible (apt-get install sword-text-kjv)")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--vocab_size", type=int, default=16000)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--dupe_factor", type=int, default=2)
    parser.add_argument("--max_predictions_per_seq", type=int, default=20)
    parser.add_argument("--num_shards", type=int, default=0,
                        help="shards of the build (0: --shards_per_copy per copy)")
    parser.add_argument("--shards_per_copy", type=int, default=4)
    parser.add_argument("--copies", type=int, default=4,
                        help="build from this many copies of the corpus (longer runs)")
    parser.add_argument("--memory_copies", default=None,
                        help="instead: the peak memory of builds from each of these copy "
                             "counts (e.g. 1,4,16), shards the same size throughout")
    parser.add_argument("--output", default=None, help="JSON path (default: results/...)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="albert-data-bench-") as folder:
        measured = memory_scan(args, folder) if args.memory_copies else speed(args, folder)
    result = {"benchmark": "data_prep", **common.machine(),
              "settings": {key: getattr(args, key) for key in (
                  "source", "vocab_size", "max_seq_length", "dupe_factor",
                  "max_predictions_per_seq", "num_shards", "shards_per_copy", "copies",
                  "memory_copies")},
              "original_examples_per_second_reference": ORIGINAL_EXAMPLES_PER_SECOND,
              **measured, "timestamp": time.time()}
    name = "data_prep_memory" if args.memory_copies else "data_prep"
    print(f"wrote {write_result(common.result_path(name, result, args.output), result)}")


if __name__ == "__main__":
    main()
