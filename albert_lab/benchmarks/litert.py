"""LiteRT (TFLite) against the SavedModel on this CPU: file size, load time, latency per
sequence, and a fine-tuned classifier's test accuracy per precision.

    python -m albert_lab.benchmarks.litert --speed albert_base          # one model size per run
    python -m albert_lab.benchmarks.litert --speed small
    python -m albert_lab.benchmarks.litert \\
        --accuracy quickstart/run/downstream_check/pretrained/seed1 \\
        --task_dir quickstart/tasks/bbc-news

Speed (`--speed`): an encoder with random weights (the numbers do not depend on them) is
written as a SavedModel taking ids (the `encode_ids` computation of `albert-export`'s
SavedModel, without its tokenizer) and as LiteRT files at each `--quantize` precision
(`albert_tf.export.litert.convert`; full-integer int8 calibrated on 32 random-id sequences of
128). Each is loaded (timed, the second time, so neither runtime's one-time start-up nor the
disk counts: `tf.saved_model.load`, or the LiteRT interpreter with its signature runner) and
called on one sequence of 32, 128 and 512 ids, timed end to end (numpy in, numpy out),
median of the runs after two warm-up calls. LiteRT runs with as many
threads as TensorFlow (the machine's cores). Sizes: `albert_base` (configs/models, V 30000),
and `small`, the quickstart's model (E 32, H 64, 4 layers, V 1000) with 512 positions.

Accuracy (`--accuracy`): a fine-tuned classification run (albert-finetune) is converted at
each precision (int8 calibrated on 200 examples of the task's training split) and scored on
the task's labelled test split, ids from the Python tokenizer; each precision's predictions
are compared with float32's.

Writes `benchmarks/results/litert-<host>.json` (both parts, each run updating its own part)
and prints the tables; `litert-<host>.md` holds them as Markdown.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import statistics
import tempfile
import time

import numpy as np
import tensorflow as tf

from albert_lab.benchmarks.common import RESULTS, machine
from albert_lab.result_files import write_result
from albert_tf.checkpoints.original import build_model
from albert_tf.config.export_formats import QUANTIZATIONS
from albert_tf.config.presets import load_preset
from albert_tf.export.litert import convert
from albert_tf.export.model_outputs import ids_specs, model_outputs
from albert_tf.models.encoder import random_encoder_inputs

LENGTHS = (32, 128, 512)
RUNS = {32: 30, 128: 15, 512: 3}
SMALL = {"vocab_size": 1000, "embedding_size": 32, "hidden_size": 64, "num_layers": 4,
         "num_attention_heads": 4, "intermediate_size": 256, "max_position_embeddings": 512}


def encoder_config(size: str):
    config = load_preset("albert_base" if size == "albert_base" else "tiny")
    if size == "small":
        config = dataclasses.replace(config, **SMALL)
    return dataclasses.replace(config, hidden_dropout=0.0, attention_dropout=0.0)


def folder_bytes(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(file.stat().st_size for file in pathlib.Path(path).rglob("*") if file.is_file())


def ids(config, length: int, seed: int = 0) -> dict[str, np.ndarray]:
    tf.random.set_seed(seed)
    return {name: value.numpy() for name, value in
            random_encoder_inputs(config, 1, length).items()}


def save_ids_saved_model(model, path: str) -> None:
    root = tf.Module()
    root.model_variables = list(model.variables)
    serve = tf.function(lambda inputs: model_outputs(model, inputs),
                        input_signature=[ids_specs()], autograph=False)
    tf.saved_model.save(root, path, signatures={"serving_default": serve.get_concrete_function()})


def load_runner(kind: str, path: str):
    """(seconds to load, a function ids -> outputs) for a SavedModel or a LiteRT file."""
    start = time.perf_counter()
    if kind == "saved_model":
        signature = tf.saved_model.load(path).signatures["serving_default"]

        def run(inputs):
            return {name: value.numpy() for name, value in signature(
                **{key: tf.constant(array) for key, array in inputs.items()}).items()}
    else:
        from ai_edge_litert.interpreter import Interpreter

        run = Interpreter(model_path=path,
                          num_threads=os.cpu_count()).get_signature_runner()

        def run(inputs, runner=run):
            return runner(**inputs)
    return time.perf_counter() - start, run


def median_ms(run, inputs, runs: int) -> float:
    for _ in range(2):
        run(inputs)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run(inputs)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def measure_speed(size: str, folder: str) -> list[dict]:
    config = encoder_config(size)
    model = build_model(config, masked_lm=False, sentence_objective="none")
    representative = [ids(config, 128, seed) for seed in range(32)]
    files = {"saved_model": os.path.join(folder, f"{size}-saved_model")}
    save_ids_saved_model(model, files["saved_model"])
    for quantize in QUANTIZATIONS:
        files[quantize] = os.path.join(folder, f"{size}-{quantize}.tflite")
        start = time.perf_counter()
        pathlib.Path(files[quantize]).write_bytes(convert(model, quantize, representative))
        print(f"  {size} {quantize}: converted in {time.perf_counter() - start:.0f} s")
    rows = []
    for variant, path in files.items():  # a first load warms the runtime and the page cache
        load_runner("saved_model" if variant == "saved_model" else "litert", path)
    for variant, path in files.items():
        load_seconds, run = load_runner("saved_model" if variant == "saved_model" else "litert",
                                        path)
        row = {"size": size, "variant": variant if variant == "saved_model"
               else f"litert {variant}", "megabytes": folder_bytes(path) / 1e6,
               "load_ms": 1e3 * load_seconds}
        for length in LENGTHS:
            row[f"ms_at_{length}"] = median_ms(run, ids(config, length), RUNS[length])
        rows.append(row)
        print(speed_row(row))
    return rows


SPEED_HEADER = ("| size | model | MB | load ms | ms/seq at 32 | at 128 | at 512 |\n"
                "|---|---|---|---|---|---|---|")


def speed_row(row: dict) -> str:
    return (f"| {row['size']} | {row['variant']} | {row['megabytes']:.1f} | "
            f"{row['load_ms']:.0f} | {row['ms_at_32']:.1f} | {row['ms_at_128']:.1f} | "
            f"{row['ms_at_512']:.1f} |")


def labelled_test(task_dir: str, tokenizer, max_seq_length: int):
    """(list of id batches of 32, labels as class indices) of the task's labelled test split."""
    from albert_tf.task_data.glue import read_labelled_test
    from albert_tf.task_data.glue_table import folder_classification_task

    task = folder_classification_task(task_dir)
    examples = read_labelled_test(task, task_dir)
    labels = np.array([task.labels.index(example.label) for example in examples])
    batches = [tokenizer.encode_for_model([example.text_a for example in examples[start:
                                                                                 start + 32]],
                                          max_seq_length=max_seq_length)
               for start in range(0, len(examples), 32)]
    return batches, labels


def measure_accuracy(run_dir: str, task_dir: str, folder: str) -> dict:
    from albert_tf.export.representative import representative_inputs
    from albert_tf.finetuning.restore import load_finetuned
    from albert_tf.tokenization import AlbertTokenizer

    run = load_finetuned(run_dir)
    tokenizer = AlbertTokenizer(run.config.model.spm_model, run.config.model.lower_case)
    length = run.config.data.max_seq_length
    batches, labels = labelled_test(task_dir, tokenizer, length)
    representative = representative_inputs(task_dir, tokenizer, length, count=200)
    predictions = {"keras float32": np.concatenate([
        run.model(batch, training=False)["logits"].numpy().argmax(-1) for batch in batches])}
    for quantize in QUANTIZATIONS:
        path = os.path.join(folder, f"classifier-{quantize}.tflite")
        pathlib.Path(path).write_bytes(convert(run.model, quantize, representative))
        _, runner = load_runner("litert", path)
        predictions[f"litert {quantize}"] = np.concatenate(
            [runner(batch)["logits"].argmax(-1) for batch in batches])
    reference = predictions["keras float32"]
    rows = [{"model": name, "accuracy": float(np.mean(predicted == labels)),
             "agrees_with_float32": float(np.mean(predicted == reference))}
            for name, predicted in predictions.items()]
    # Paths as given from the repository root (where the benchmarks run), not this machine's.
    return {"run": os.path.relpath(run_dir), "task_dir": os.path.relpath(task_dir),
            "task": run.config.task, "test_examples": int(len(labels)),
            "max_seq_length": length, "rows": rows}


def accuracy_table(result: dict) -> str:
    lines = [f"{result['test_examples']} test examples of {os.path.basename(result['task_dir'])}"
             f" (sequence {result['max_seq_length']})", "",
             "| model | test accuracy | predictions equal to float32 Keras |", "|---|---|---|"]
    lines += [f"| {row['model']} | {100 * row['accuracy']:.2f}% | "
              f"{100 * row['agrees_with_float32']:.2f}% |" for row in result["rows"]]
    return "\n".join(lines)


def write(result: dict) -> None:
    path = RESULTS / f"litert-{result['host']['host']}.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    merged = {**previous, **result, "speed": {**previous.get("speed", {}),
                                              **result.get("speed", {})}}
    write_result(path, merged, page=markdown(merged))
    print("wrote", path, "and", path.with_suffix(".md"))


def markdown(result: dict) -> str:
    text = ["# LiteRT against the SavedModel", "",
            f"Made by `python -m albert_lab.benchmarks.litert` on {result['host']['cpu']} "
            f"({result['host']['logical_cpus']} logical CPUs); TensorFlow "
            f"{result['tensorflow']}, ai-edge-litert {result['litert']}.", "",
            "## Size, load time, latency per sequence (batch 1)", "", SPEED_HEADER]
    text += [speed_row(row) for size in ("albert_base", "small")
             for row in result["speed"].get(size, [])]
    if "accuracy" in result:
        text += ["", "## A fine-tuned classifier at each precision", "",
                 accuracy_table(result["accuracy"])]
    return "\n".join(text) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--speed", choices=("albert_base", "small"))
    parser.add_argument("--accuracy", help="a fine-tuned classification run folder")
    parser.add_argument("--task_dir", help="its task folder (with a labelled test split)")
    args = parser.parse_args()
    from ai_edge_litert import __version__ as litert_version

    result = {"host": machine(), "tensorflow": tf.__version__, "litert": litert_version}
    with tempfile.TemporaryDirectory(prefix="litert-bench-") as folder:
        if args.speed:
            print(SPEED_HEADER)
            result["speed"] = {args.speed: measure_speed(args.speed, folder)}
        if args.accuracy:
            result["accuracy"] = measure_accuracy(args.accuracy, args.task_dir, folder)
            print(accuracy_table(result["accuracy"]))
    write(result)


if __name__ == "__main__":
    main()
