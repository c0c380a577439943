"""Raw-text serving latency of an exported SavedModel: p50/p99 per request, tokenization share.

    python -m albert_lab.benchmarks.serving                          # tiny and albert_base, seq 128
    python -m albert_lab.benchmarks.serving --presets albert_base --spm_model 30k-clean.model

For each preset, a model with random weights is exported with `albert-export`'s code path
(`export_saved_model`, max_seq_length 128), loaded back with `tf.saved_model.load`, and its
`serving_default` signature (raw text in, tokenization inside the graph) is called with
batches of 1 and 32 texts long enough to fill all 128 positions. Each request is timed end to
end (strings in, numpy out). The tokenization share is the p50 of the `preprocess` signature
(the same in-graph tokenization and packing, no model) over the p50 of `serving_default`.
Both the plain and the XLA-compiled (`--jit_compile`) exports are measured; XLA compiles
each new (batch, length) shape once, in the first call, which is reported apart.

Without `--spm_model`, a SentencePiece model of 8,000 pieces is trained on the docstrings of
this Python's standard library (English prose present on every machine), and the model's
vocab_size is set to its size: the vocabulary size only changes the embedding lookup, which
costs nothing next to the transformer. Model FLOPs per request come from `albert_tf.flops`
(the encoder forward); utilisation is over a float32 matmul peak measured in the same run.
Prints a table and writes JSON to `benchmarks/results/serving-<host>.json`.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import tempfile
import time

import numpy as np
import tensorflow as tf

from albert_lab.benchmarks.common import device_info, machine, measure_matmul_peak, result_path
from albert_lab.corpora.local_corpus import stdlib_docstring_documents
from albert_lab.result_files import write_result
from albert_tf.checkpoints.original import build_model
from albert_tf.config.presets import load_preset
from albert_tf.export import ExportOptions, export_saved_model, load_saved_model
from albert_tf.flops import encoder_forward_flops_per_token
from albert_tf.text.normalize import normalize_text
from albert_tf.text.vocabulary import SentencePieceTokenizer, train_sentencepiece

HEADER = (f"{'preset':<12} {'xla':<4} {'batch':>5} {'requests':>8} {'p50 ms':>9} {'p99 ms':>9} "
          f"{'first ms':>9} {'tokenize p50 ms':>15} {'tokenize %':>10} {'texts/s':>8} "
          f"{'MFU':>6}")


def format_row(row: dict) -> str:
    return (f"{row['preset']:<12} {'on' if row['xla'] else 'off':<4} {row['batch_size']:>5} "
            f"{row['requests']:>8} {row['p50_ms']:>9.2f} {row['p99_ms']:>9.2f} "
            f"{row['first_request_ms']:>9.1f} {row['tokenize_p50_ms']:>15.2f} "
            f"{100 * row['tokenization_share']:>9.1f}% "
            f"{row['texts_per_second']:>8.1f} {100 * row['mfu']:>5.1f}%")


def corpus_texts(min_chars: int) -> list[str]:
    """Docstring paragraphs of the standard library joined into texts of >= min_chars."""
    texts, current = [], ""
    for sentences in stdlib_docstring_documents():
        current = f"{current} {' '.join(sentences)}".strip()
        if len(current) >= min_chars:
            texts.append(current)
            current = ""
    return texts


def sentencepiece_model(folder: str, vocab_size: int) -> str:
    sentences = (normalize_text(sentence, True) for document in stdlib_docstring_documents()
                 for sentence in document)
    return train_sentencepiece(sentences, os.path.join(folder, "serving"), vocab_size)


def latencies(function, requests: int, warmup: int, **inputs) -> np.ndarray:
    """Seconds per call, strings in and numpy out: `warmup` calls (the first one included,
    which pays any XLA compilation), then `requests` timed calls."""
    inputs = {name: tf.constant(value) for name, value in inputs.items()}
    times = []
    for _ in range(warmup + requests):
        start = time.perf_counter()
        {name: value.numpy() for name, value in function(**inputs).items()}
        times.append(time.perf_counter() - start)
    return np.asarray(times)


def measure(preset: str, spm_model: str, texts: list[str], jit_compile: bool, folder: str,
            requests: dict[int, int], peak_flops: float, seq_length: int) -> list[dict]:
    vocab_size = SentencePieceTokenizer(spm_model).vocab_size
    config = dataclasses.replace(load_preset(preset), vocab_size=vocab_size)
    model = build_model(config, masked_lm=False, sentence_objective="none")
    output = os.path.join(folder, f"{preset}-{'xla' if jit_compile else 'plain'}")
    start = time.perf_counter()
    export_saved_model(model, spm_model, output, ExportOptions(
        max_seq_length=seq_length, jit_compile=jit_compile,
        pad_to_multiple_of=16 if jit_compile else 1))
    export_seconds = time.perf_counter() - start
    start = time.perf_counter()
    served = load_saved_model(output)
    load_seconds = time.perf_counter() - start
    rows = []
    for batch_size, count in requests.items():
        batch = list(itertools.islice(itertools.cycle(texts), batch_size))
        lengths = served.signatures["preprocess"](text=tf.constant(batch))["input_mask"]
        assert lengths.shape[1] == seq_length and int(tf.reduce_min(
            tf.reduce_sum(lengths, 1))) == seq_length, "texts must fill every position"
        total = latencies(served.signatures["serving_default"], count, 2, text=batch)
        first_request, total = total[0], total[2:]
        tokenize = latencies(served.signatures["preprocess"], count, 2, text=batch)[2:]
        flops = batch_size * seq_length * encoder_forward_flops_per_token(config, seq_length)
        p50 = float(np.percentile(total, 50))
        rows.append({
            "preset": preset, "xla": jit_compile, "batch_size": batch_size,
            "seq_length": seq_length, "requests": count, "p50_ms": 1e3 * p50,
            "p99_ms": 1e3 * float(np.percentile(total, 99)), "mean_ms": 1e3 * total.mean(),
            "tokenize_p50_ms": 1e3 * float(np.percentile(tokenize, 50)),
            "tokenize_p99_ms": 1e3 * float(np.percentile(tokenize, 99)),
            "tokenization_share": float(np.percentile(tokenize, 50)) / p50,
            "first_request_ms": 1e3 * first_request,
            "texts_per_second": batch_size / p50, "gflop_per_request": flops / 1e9,
            "mfu": flops / p50 / peak_flops, "export_seconds": export_seconds,
            "load_seconds": load_seconds, "vocab_size": config.vocab_size})
        print(format_row(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", default="tiny,albert_base")
    parser.add_argument("--spm_model", help="default: train 8,000 pieces on stdlib docstrings")
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--requests", default="tiny:1=300,32=100;albert_base:1=100,32=20",
                        help="requests per preset and batch size")
    parser.add_argument("--output", default=None, help="JSON path (default: results/...)")
    args = parser.parse_args()
    plan = {preset: {int(batch): int(count) for batch, count in
                     (item.split("=") for item in sizes.split(","))}
            for preset, sizes in (entry.split(":") for entry in args.requests.split(";"))}
    peak = measure_matmul_peak()
    print(f"measured float32 matmul peak: {peak / 1e9:.1f} GFLOP/s")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        spm_model = args.spm_model or sentencepiece_model(folder, 8000)
        texts = corpus_texts(min_chars=8 * args.seq_length)
        print(HEADER)
        for preset in args.presets.split(","):
            for jit_compile in (False, True):
                rows += measure(preset, spm_model, texts, jit_compile, folder,
                                plan.get(preset, {1: 100, 32: 20}), peak, args.seq_length)
    result = {"benchmark": "serving", **machine(), "tensorflow": tf.__version__,
              **device_info(tf.distribute.get_strategy()), "matmul_peak_gflops": peak / 1e9,
              "spm_model": args.spm_model or "8,000 pieces trained on stdlib docstrings",
              "rows": rows}
    output = write_result(result_path("serving", result, args.output), result)
    print(f"\n{HEADER}\n" + "\n".join(format_row(row) for row in rows))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
