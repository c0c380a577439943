"""Fine-tuning costs: feature conversion rates and the classifier train step with and without
per-batch padding cuts.

    python -m albert_lab.benchmarks.finetune                       # tiny and albert_base
    python -m albert_lab.benchmarks.finetune --presets albert_base --spm_model 30k-clean.model

Conversion: sentence pairs and SQuAD questions built from the docstrings of this Python's
standard library (English prose on every machine) go through the task code `albert-finetune`
runs (`GlueTask.convert`: tokenize, truncate, pack; `squad.convert_examples`: context
offsets, windows; `squad_postprocess.predict_answers` on random logits). Without
`--spm_model`, an 8,000-piece SentencePiece model is trained on the same docstrings.

Train step: an `AlbertClassifier` with AdamW, batches of `--batch_size` whose rows hold
`--text_length` tokens (GLUE sentence pairs are mostly under 64 pieces): once padded to
`--max_seq_length` (512, as the paper's GLUE recipes and the original code run them), once
cut to the batch's longest row rounded up to 16, as `albert_tf.finetuning.datasets` does;
each with XLA on and off (`--xla`). A fine-tune with cut batches meets up to
max_seq_length / 16 shapes in training and as many again in evaluation, and XLA compiles
each one: the first step's time less a step's is that cost per shape. Model
FLOPs come from `albert_tf.flops` (encoder forward x 3); utilisation is over a float32
matmul peak measured in the same run. Prints a table and writes JSON to
`benchmarks/results/finetune-<host>.json`.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import random
import tempfile
import time

import numpy as np
import tensorflow as tf
import tf_keras

from albert_lab.benchmarks.common import machine, measure_matmul_peak, result_path
from albert_lab.benchmarks.serving import sentencepiece_model
from albert_lab.corpora.local_corpus import stdlib_docstring_documents
from albert_lab.result_files import write_result
from albert_tf.config.finetuning import load_finetune_config
from albert_tf.config.presets import load_preset
from albert_tf.finetuning.datasets import trim_to_longest
from albert_tf.finetuning.task_kinds import get_task
from albert_tf.flops import encoder_training_flops
from albert_tf.loop.optimization import OptimizerConfig, create_optimizer
from albert_tf.models.task_models import AlbertClassifier
from albert_tf.task_data import squad, squad_postprocess
from albert_tf.task_data.examples import SquadExample, TextExample
from albert_tf.tokenization import AlbertTokenizer


def sentences() -> list[str]:
    return [sentence for document in stdlib_docstring_documents() for sentence in document
            if len(sentence.split()) >= 4]


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def conversion_rates(tokenizer: AlbertTokenizer, texts: list[str], pairs: int,
                     questions: int) -> list[dict]:
    """Examples per second of GLUE pair conversion, SQuAD windowing and SQuAD answers."""
    rng = random.Random(0)
    glue = get_task(load_finetune_config(None, ["data.max_seq_length=128"], task="rte"))
    examples = [TextExample(f"dev-{i}", rng.choice(texts), rng.choice(texts), "entailment")
                for i in range(pairs)]
    _, glue_seconds = timed(glue.convert, examples, tokenizer, False)
    contexts = [" ".join(texts[start:start + 8]) for start in range(0, len(texts) - 8, 8)]
    squad_examples = []
    for index in range(questions):
        context = contexts[index // 5 % len(contexts)]
        words = context.split()
        first = rng.randrange(len(words) - 3)
        answer = " ".join(words[first:first + 3])
        start = len(" ".join(words[:first])) + (1 if first else 0)
        squad_examples.append(SquadExample(f"q{index}", rng.choice(texts), context,
                                           ((answer, start),)))
    features, squad_seconds = timed(squad.convert_examples, squad_examples, tokenizer, 384, 128,
                                    64, True)
    logits = np.random.default_rng(0).normal(size=features["input_word_ids"].shape)
    _, answer_seconds = timed(squad_postprocess.predict_answers, squad_examples, features,
                              logits, logits[:, ::-1].copy())
    return [{"step": "GLUE pairs -> features (seq 128)", "examples": pairs,
             "examples_per_second": pairs / glue_seconds},
            {"step": "SQuAD questions -> windows (seq 384)", "examples": questions,
             "windows": int(len(features["example_index"])),
             "examples_per_second": questions / squad_seconds},
            {"step": "SQuAD logits -> answers (n-best 20)", "examples": questions,
             "examples_per_second": questions / answer_seconds}]


def train_step_rate(config, batch_size: int, text_length: int, max_seq_length: int,
                    trimmed: bool, steps: int, jit_compile: bool) -> dict:
    """Seconds per classifier train step on batches of `text_length`-token rows."""
    rng = np.random.default_rng(0)
    mask = np.zeros((batch_size, max_seq_length), np.int32)
    lengths = rng.integers(text_length // 2, text_length + 1, batch_size)
    mask[np.arange(max_seq_length)[None] < lengths[:, None]] = 1
    batch = {"input_word_ids": rng.integers(5, config.vocab_size, mask.shape,
                                            dtype=np.int32) * mask,
             "input_mask": mask, "input_type_ids": np.zeros_like(mask),
             "label": rng.integers(0, 2, batch_size).astype(np.int32)}
    batch = {name: tf.constant(value) for name, value in batch.items()}
    if trimmed:
        batch = trim_to_longest(batch, 16)
    seq_length = int(batch["input_mask"].shape[1])
    tf_keras.utils.set_random_seed(0)
    model = AlbertClassifier(config, num_classes=2)
    model.compile(optimizer=create_optimizer(OptimizerConfig(type="adamw", warmup_steps=1),
                                             1000), jit_compile=jit_compile)
    iterator = iter(tf.data.Dataset.from_tensors(batch).repeat())
    train = model.make_train_function()
    _, first = timed(lambda: train(iterator)["loss"].numpy())
    train(iterator)["loss"].numpy()
    _, seconds = timed(lambda: [train(iterator)["loss"].numpy() for _ in range(steps)])
    step_seconds = seconds / steps
    flops = encoder_training_flops(config, batch_size, seq_length)
    return {"seq_length": seq_length, "step_seconds": step_seconds,
            "first_step_seconds": first, "examples_per_second": batch_size / step_seconds,
            "model_flops": flops, "flops_per_second": flops / step_seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", nargs="+", default=["tiny", "albert_base"])
    parser.add_argument("--spm_model", help="default: train 8,000 pieces on stdlib docstrings")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--text_length", type=int, default=48,
                        help="tokens per row (rows hold between half of this and this)")
    parser.add_argument("--max_seq_length", type=int, default=512)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--xla", nargs="+", choices=["on", "off"], default=["on", "off"])
    parser.add_argument("--pairs", type=int, default=20000)
    parser.add_argument("--questions", type=int, default=5000)
    parser.add_argument("--output")
    args = parser.parse_args()
    # Random logits leave some questions without a valid span; that is not news here.
    logging.getLogger(squad_postprocess.__name__).setLevel(logging.ERROR)
    texts = sentences()
    with tempfile.TemporaryDirectory() as folder:
        spm_model = args.spm_model or sentencepiece_model(folder, 8000)
        tokenizer = AlbertTokenizer(spm_model)
        conversions = conversion_rates(tokenizer, texts, args.pairs, args.questions)
    print(f"{'conversion':<40} {'examples':>9} {'examples/s':>11}")
    for row in conversions:
        print(f"{row['step']:<40} {row['examples']:>9} {row['examples_per_second']:>11.0f}")
    peak = measure_matmul_peak()
    steps = []
    print(f"\nmatmul peak {peak / 1e9:.0f} GFLOP/s\n{'preset':<12} {'padding':<8} {'XLA':<4} "
          f"{'seq':>4} {'step s':>8} {'first s':>8} {'examples/s':>11} {'MFU':>6}")
    for preset in args.presets:
        config = dataclasses.replace(load_preset(preset), vocab_size=tokenizer.vocab_size)
        max_seq_length = min(args.max_seq_length, config.max_position_embeddings)
        rows = {}
        for trimmed in (False, True):
            for xla in args.xla:
                row = train_step_rate(config, args.batch_size, args.text_length,
                                      max_seq_length, trimmed, args.steps, xla == "on")
                row.update(preset=preset, padding="cut" if trimmed else "full", xla=xla,
                           mfu=row["flops_per_second"] / peak)
                rows[row["padding"], xla] = row
                steps.append(row)
                print(f"{preset:<12} {row['padding']:<8} {xla:<4} {row['seq_length']:>4} "
                      f"{row['step_seconds']:>8.3f} {row['first_step_seconds']:>8.2f} "
                      f"{row['examples_per_second']:>11.1f} {100 * row['mfu']:>5.1f}%")
        for xla in args.xla:
            print(f"{preset:<12} XLA {xla}: speed-up of cutting padding "
                  f"{rows['full', xla]['step_seconds'] / rows['cut', xla]['step_seconds']:.1f}x")
        if len(args.xla) == 2:
            on, off = rows["cut", "on"], rows["cut", "off"]
            print(f"{preset:<12} XLA on cut batches: step time x"
                  f"{on['step_seconds'] / off['step_seconds']:.2f}, each new shape costs "
                  f"{on['first_step_seconds'] - on['step_seconds']:.1f} s to compile "
                  f"(off: {off['first_step_seconds'] - off['step_seconds']:.1f} s to trace)")
    result = {**machine(), "tensorflow": tf.__version__, "matmul_peak_flops": peak,
              "batch_size": args.batch_size, "text_length": args.text_length,
              "max_seq_length": args.max_seq_length,
              "spm_model": args.spm_model or "8,000 pieces trained on stdlib docstrings",
              "conversion": conversions, "train_steps": steps}
    print(f"wrote {write_result(result_path('finetune', result, args.output), result)}")


if __name__ == "__main__":
    main()
