"""Fine-tunes side by side: runs per hour of the downstream suite's fine-tunes with one worker
process and with several, each worker with its share of the cores.

    python -m albert_lab.benchmarks.fine_tune_workers                 # 4 runs of 200 steps, 1 and 2
    python -m albert_lab.benchmarks.fine_tune_workers --hidden_size 128 --workers 1 2 4

The seed loops of the downstream suite, the tables and `albert-pretrain`'s check
(`albert_lab.comparison.seed_loop.run_seed_loops`) fine-tune small models many times: the
suite's recipe (`small_model_v4`: batches of 32, sequences of 128, AdamW) from a random start
of `--hidden_size` x `--num_layers` (E 32, 4 heads, 4x feed-forward, all shared). Each
setting fine-tunes the same `--runs` seeds in a fresh folder with `--workers` processes at
once (`ALBERT_FINE_TUNE_WORKERS`), TensorFlow's import and the feature conversion included,
as in the suite. The task is made here: sentences of this Python's standard-library
docstrings, labelled by which half of the alphabet their first word starts in (the rate,
not the score, is measured), with an 8,000-piece SentencePiece model trained on the same
docstrings. Prints a table and writes JSON to
`benchmarks/results/fine_tune_workers-<host>.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import yaml

from albert_lab.benchmarks.common import machine, result_path
from albert_lab.benchmarks.serving import sentencepiece_model
from albert_lab.comparison.recipes import SMALL_MODEL, SMALL_MODEL_RECIPE
from albert_lab.comparison.seed_loop import (
    SeedLoop,
    raise_first_error,
    run_seed_loops,
    threads_per_worker,
)
from albert_lab.corpora.local_corpus import stdlib_docstring_documents
from albert_lab.result_files import write_result
from albert_tf.io.machine import usable_cpus
from albert_tf.task_data.glue_table import FOLDER_DESCRIPTION


def write_task(folder: str, train: int = 2000, dev: int = 300) -> None:
    """A two-class task folder (train.tsv, dev.tsv, and the source.json naming the labels)
    of docstring sentences."""
    rows = [sentence.replace("\t", " ") for document in stdlib_docstring_documents()
            for sentence in document if len(sentence.split()) >= 6][:train + dev]
    os.makedirs(folder, exist_ok=True)
    for name, part in (("train", rows[:train]), ("dev", rows[train:])):
        with open(os.path.join(folder, f"{name}.tsv"), "w", encoding="utf-8") as f:
            f.write("sentence\tlabel\n")
            f.writelines(f"{text}\t{int(text[:1].lower() > 'm')}\n" for text in part)
    with open(os.path.join(folder, FOLDER_DESCRIPTION), "w", encoding="utf-8") as f:
        json.dump({"labels": ["0", "1"], "albert_finetune": {"task": "classify"}}, f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--runs", type=int, default=4, help="fine-tunes per setting")
    parser.add_argument("--steps", type=int, default=200, help="training steps per run")
    parser.add_argument("--hidden_size", type=int, default=64)
    parser.add_argument("--num_layers", type=int, default=4)
    parser.add_argument("--output")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        spm_model = sentencepiece_model(work, 8000)
        task_dir = os.path.join(work, "task")
        write_task(task_dir)
        model = {"vocab_size": 8000, "embedding_size": 32, "hidden_size": args.hidden_size,
                 "num_layers": args.num_layers, "num_attention_heads": 4,
                 "intermediate_size": 4 * args.hidden_size, "max_position_embeddings": 128,
                 "hidden_dropout": 0.0, "attention_dropout": 0.0}
        model_config = os.path.join(work, "model_config.yaml")
        with open(model_config, "w", encoding="utf-8") as f:
            yaml.safe_dump(model, f)
        overrides = [*SMALL_MODEL_RECIPE, f"model.config={model_config}",
                     f"model.spm_model={spm_model}", f"data.data_dir={task_dir}",
                     "data.max_seq_length=128", f"train.train_steps={args.steps}",
                     f"train.eval_every_steps={args.steps}"]
        rows = []
        for workers in args.workers:
            loop = SeedLoop("classify", overrides, tuple(range(1, args.runs + 1)),
                            os.path.join(work, f"workers{workers}"))
            start = time.perf_counter()
            run_seed_loops([loop], workers)
            seconds = time.perf_counter() - start
            raise_first_error([loop])
            rows.append({"workers": workers,
                         "threads_per_worker": threads_per_worker(workers) or "default",
                         "runs": args.runs, "seconds": seconds,
                         "runs_per_hour": 3600 * args.runs / seconds,
                         "dev_accuracy": [loop.records[str(seed)]["value"]
                                          for seed in range(1, args.runs + 1)]})
    for row in rows:
        row["times_one_worker"] = row["runs_per_hour"] / rows[0]["runs_per_hour"]
    print(f"{args.runs} fine-tunes of {args.steps} steps ({SMALL_MODEL}, H {args.hidden_size} "
          f"x {args.num_layers}) on {usable_cpus()} cores")
    print(f"{'workers':>7}  {'threads':>7}  {'seconds':>8}  {'runs/hour':>9}  {'x first':>7}")
    for row in rows:
        print(f"{row['workers']:>7}  {row['threads_per_worker']!s:>7}  {row['seconds']:>8.1f}  "
              f"{row['runs_per_hour']:>9.1f}  {row['times_one_worker']:>7.2f}")
    result = {**machine(), "recipe": SMALL_MODEL, "steps": args.steps,
              "model": {"hidden_size": args.hidden_size, "num_layers": args.num_layers},
              "rows": rows}
    print(f"wrote {write_result(result_path('fine_tune_workers', result, args.output), result)}")


if __name__ == "__main__":
    main()
