"""Pretraining train step: examples/s and model-FLOPs utilisation, ours vs Model Garden.

    python benchmarks/train_step.py                          # tiny and albert_base, seq 128
    python benchmarks/train_step.py --models albert_base --batch_size_base 8 --steps 5

For each preset it trains, with `model.fit` on one repeated in-memory batch (random ids, 20
masked positions of weight 1, random SOP labels), two models under the same optimizer (our
LAMB from `albert_tf.optimization`) and the same losses (`albert_tf.models.pretrainer`):
- `albert_tf`: our `AlbertPretrainer` (sentence objective sop) and its own `train_step`;
- `model_garden`: Model Garden's `AlbertEncoder` (built as in `encoder_step.py`) inside its
  `BertPretrainerV2` with the heads its masked_lm task uses (`MaskedLM` tied to the word
  embeddings, a `ClassificationHead` on the [CLS] token), under a `train_step` of the same shape.
Each is compiled plain and with XLA (`jit_compile`), with `steps_per_execution` = `--steps`,
so one `fit` call of the model runs `--steps` steps without returning to Python. The four
variants of a preset take turns, one execution each per round: the first round (tracing and
compiling) is a warm-up, the next `--executions` rounds are timed and each variant's fastest
execution is reported (the machine's speed drifts by 10% or more between minutes). FLOPs
come from `albert_tf.flops.pretraining_step_flops`; the peak is a large float32 matmul
measured in the same run (before and after the models; the higher one counts).
Prints a markdown table and writes JSON to `benchmarks/results/train_step-<host>.json`.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import psutil  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402

from albert_tf.checkpoints.model_garden import model_garden_encoder  # noqa: E402
from albert_tf.flops import pretraining_step_flops  # noqa: E402
from albert_tf.models.encoder import INPUT_NAMES, random_encoder_inputs  # noqa: E402
from albert_tf.models.pretrainer import (AlbertPretrainer, masked_lm_loss,  # noqa: E402
                                         sentence_loss)
from albert_tf.optimization import OptimizerConfig, create_optimizer  # noqa: E402
from albert_tf.presets import load_preset  # noqa: E402
from common import machine, write_result  # noqa: E402
from encoder_step import measure_matmul_peak  # noqa: E402

DECAY_STEPS = 1_000_000  # any number above the default warm-up; the schedule does not matter
DEFAULT_STEPS = {"tiny": 50}  # steps per execution; other presets: 5


def random_pretraining_batch(config, batch_size: int, seq_length: int,
                             num_predictions: int, seed: int = 0) -> dict[str, tf.Tensor]:
    """Random ids with `num_predictions` distinct masked positions per row, all of weight 1."""
    tf.random.set_seed(seed)
    rng = np.random.default_rng(seed)
    batch = random_encoder_inputs(config, batch_size, seq_length)
    positions = np.stack([np.sort(rng.choice(np.arange(1, seq_length - 1), num_predictions,
                                             replace=False)) for _ in range(batch_size)])
    batch.update(
        masked_lm_positions=tf.constant(positions, tf.int32),
        masked_lm_ids=tf.constant(rng.integers(5, config.vocab_size,
                                               (batch_size, num_predictions)), tf.int32),
        masked_lm_weights=tf.ones((batch_size, num_predictions), tf.float32),
        next_sentence_labels=tf.constant(rng.integers(0, 2, (batch_size, 1)), tf.int32))
    return batch


class ModelGardenPretrainer(tf_keras.Model):
    """Model Garden's `BertPretrainerV2` over its `AlbertEncoder`, wired as the masked_lm task
    of tf-models-official wires it, trained on our losses and metered with that task's metrics.

    The sentence head is the task's `ClassificationHead(inner_dim=hidden_size)` on the [CLS]
    token (its own tanh pooler), so the encoder's pooler gets no gradient and is not updated.
    """

    def __init__(self, config, **kwargs):
        super().__init__(name="model_garden_pretrainer", **kwargs)
        from official.modeling import activations
        from official.nlp.modeling import layers, models

        initializer = tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range)
        self.pretrainer = models.BertPretrainerV2(
            model_garden_encoder(config), mlm_activation=activations.gelu,
            mlm_initializer=initializer,
            classification_heads=[layers.ClassificationHead(
                inner_dim=config.hidden_size, num_classes=2, initializer=initializer,
                dropout_rate=config.hidden_dropout, name="next_sentence")])
        self._trackers = {
            "lm_example_loss": tf_keras.metrics.Mean("lm_example_loss"),
            "masked_lm_accuracy": tf_keras.metrics.SparseCategoricalAccuracy(
                "masked_lm_accuracy"),
            "next_sentence_loss": tf_keras.metrics.Mean("next_sentence_loss"),
            "next_sentence_accuracy": tf_keras.metrics.SparseCategoricalAccuracy(
                "next_sentence_accuracy")}

    def call(self, inputs, training=None):
        names = INPUT_NAMES + ("masked_lm_positions",)
        outputs = self.pretrainer({name: inputs[name] for name in names}, training=training)
        return {"mlm_logits": outputs["mlm_logits"],
                "sentence_logits": outputs["next_sentence"]}

    def train_step(self, features):
        with tf.GradientTape() as tape:
            outputs = self(features, training=True)
            mlm_loss = masked_lm_loss(outputs["mlm_logits"], features["masked_lm_ids"],
                                      features["masked_lm_weights"])
            next_sentence_loss = sentence_loss(outputs["sentence_logits"],
                                               features["next_sentence_labels"])
            loss = mlm_loss + next_sentence_loss
        variables = self.trainable_variables
        gradients = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(
            [(g, v) for g, v in zip(gradients, variables) if g is not None])
        self._trackers["lm_example_loss"].update_state(mlm_loss)
        self._trackers["masked_lm_accuracy"].update_state(
            features["masked_lm_ids"], outputs["mlm_logits"], features["masked_lm_weights"])
        self._trackers["next_sentence_loss"].update_state(next_sentence_loss)
        self._trackers["next_sentence_accuracy"].update_state(
            features["next_sentence_labels"], outputs["sentence_logits"])
        return {name: tracker.result() for name, tracker in self._trackers.items()}

    @property
    def metrics(self):
        return list(self._trackers.values())


BUILDERS = {"albert_tf": lambda config: AlbertPretrainer(config, "sop"),
            "model_garden": ModelGardenPretrainer}


class ExecutionTimer(tf_keras.callbacks.Callback):
    """Wall time of every `train_function` call (one call runs `steps_per_execution` steps),
    until its logs (the metrics) are on the host."""

    def __init__(self):
        super().__init__()
        self.seconds: list[float] = []
        self._start = 0.0

    def on_train_batch_begin(self, batch, logs=None):
        self._start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        for value in (logs or {}).values():
            np.asarray(value)  # waits for the step's results
        self.seconds.append(time.perf_counter() - self._start)


def compiled_trainer(implementation: str, config, batch, jit_compile: bool, steps: int):
    """A built model of `implementation` compiled with our LAMB, `steps` steps per execution."""
    tf_keras.utils.set_random_seed(0)
    model = BUILDERS[implementation](config)
    model(batch, training=False)
    model.compile(optimizer=create_optimizer(OptimizerConfig(), DECAY_STEPS),
                  steps_per_execution=steps, jit_compile=jit_compile)
    return model


def time_in_turns(trainers: dict, batch, steps: int, executions: int) -> dict[tuple, list]:
    """Seconds per step of each trainer's timed executions. The trainers take turns, one
    execution each per round, so a drift of the machine's speed hits all of them alike; the
    first round (tracing and compiling) is the warm-up."""
    data = tf.data.Dataset.from_tensors(batch).repeat()
    timer = ExecutionTimer()
    times = {key: [] for key in trainers}
    for round_ in range(1 + executions):
        for key, model in trainers.items():
            timer.seconds.clear()
            model.fit(data, epochs=1, steps_per_epoch=steps, callbacks=[timer], verbose=0)
            if round_:
                times[key].append(timer.seconds[0] / steps)
        print(f"  round {round_}: " + ", ".join(
            f"{key[0]}{' XLA' if key[1] else ''} {timer_ms(times[key])}" for key in trainers),
            flush=True)
    return times


def timer_ms(seconds: list[float]) -> str:
    return f"{seconds[-1] * 1e3:.0f} ms/step" if seconds else "warm-up"


def run_preset(args, preset: str, peak: float) -> list[dict]:
    config = load_preset(preset)
    batch_size = args.batch_size_tiny if preset == "tiny" else args.batch_size_base
    steps = args.steps or DEFAULT_STEPS.get(preset, 5)
    batch = random_pretraining_batch(config, batch_size, args.seq_length, args.num_predictions)
    flops = pretraining_step_flops(config, batch_size, args.seq_length, args.num_predictions)
    print(f"{preset}: batch {batch_size}, {steps} steps per execution", flush=True)
    tf_keras.backend.clear_session()
    trainers = {(implementation, jit_compile): compiled_trainer(implementation, config, batch,
                                                                 jit_compile, steps)
                for implementation in args.implementations for jit_compile in (False, True)}
    times = time_in_turns(trainers, batch, steps, args.executions)
    rows = []
    for (implementation, jit_compile), per_execution in times.items():
        seconds = min(per_execution)
        rows.append({"model": preset, "implementation": implementation, "xla": jit_compile,
                     "batch_size": batch_size, "seq_length": args.seq_length,
                     "num_predictions": args.num_predictions, "steps_per_execution": steps,
                     "step_seconds": seconds,
                     "step_seconds_median": float(np.median(per_execution)),
                     "step_seconds_per_execution": per_execution,
                     "examples_per_second": batch_size / seconds, "gflop_per_step": flops / 1e9,
                     "achieved_gflops": flops / seconds / 1e9, "mfu": flops / seconds / peak})
    for row in rows:
        row.update(rss_gib=psutil.Process().memory_info().rss / 2 ** 30,
                   load_average_1min=os.getloadavg()[0])
    add_speedups(rows)
    return rows


def add_speedups(rows: list[dict]) -> None:
    """Our step time's speed-up over Model Garden's in the same mode and over its fastest."""
    garden = {r["xla"]: r["step_seconds"] for r in rows if r["implementation"] == "model_garden"}
    for row in rows:
        if row["implementation"] == "albert_tf" and row["xla"] in garden:
            row["speedup_over_model_garden"] = garden[row["xla"]] / row["step_seconds"]
            row["speedup_over_fastest_model_garden"] = (min(garden.values())
                                                        / row["step_seconds"])


def target_summary(rows: list[dict]) -> dict:
    """The issue's targets for albert_base: our XLA step >= 1.2x Model Garden's, MFU >= 50%."""
    ours = [r for r in rows if r["model"] == "albert_base" and r["xla"]
            and r["implementation"] == "albert_tf"]
    if not ours or "speedup_over_model_garden" not in ours[0]:
        return {}
    row = ours[0]
    return {"speedup_over_model_garden_xla": row["speedup_over_model_garden"],
            "speedup_over_fastest_model_garden": row["speedup_over_fastest_model_garden"],
            "mfu": row["mfu"],
            "met": (row["speedup_over_fastest_model_garden"] >= 1.2 and row["mfu"] >= 0.5)}


def markdown_table(rows: list[dict]) -> str:
    lines = ["| model | implementation | mode | batch | ms/step | examples/s | GFLOP/s | MFU "
             "| speed-up over Model Garden |", "|" + "---|" * 9]
    for r in rows:
        speedup = r.get("speedup_over_model_garden")
        lines.append(
            f"| {r['model']} | {r['implementation']} | {'XLA' if r['xla'] else 'plain'} "
            f"| {r['batch_size']} | {r['step_seconds'] * 1e3:.1f} "
            f"| {r['examples_per_second']:.1f} | {r['achieved_gflops']:.1f} "
            f"| {r['mfu'] * 100:.1f}% | {f'{speedup:.2f}x' if speedup else '-'} |")
    return "\n".join(lines)


def run(args) -> dict:
    peak_before = measure_matmul_peak()
    print(f"measured float32 matmul peak: {peak_before / 1e9:.1f} GFLOP/s "
          f"({os.cpu_count()} logical CPUs)", flush=True)
    rows = [row for preset in args.models for row in run_preset(args, preset, peak_before)]
    peak_after = measure_matmul_peak()
    peak = max(peak_before, peak_after)
    for row in rows:  # MFU against the higher of the two peak measurements
        row["mfu"] = row["achieved_gflops"] * 1e9 / peak
    return {"benchmark": "train_step", **machine(), "tensorflow": tf.__version__,
            "tf_keras": tf_keras.__version__,
            "tf_models_official": importlib.metadata.version("tf-models-official"),
            "device": "CPU",
            "optimizer": "albert_tf.optimization.Lamb (OptimizerConfig defaults)",
            "matmul_peak_gflops": peak / 1e9,
            "matmul_peak_gflops_before_after": [peak_before / 1e9, peak_after / 1e9],
            "executions": args.executions, "note": args.note,
            "targets_albert_base": target_summary(rows), "rows": rows}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["tiny", "albert_base"],
                        help="model presets (albert_tf/configs/models)")
    parser.add_argument("--implementations", nargs="+", default=list(BUILDERS),
                        choices=list(BUILDERS))
    parser.add_argument("--steps", type=int, default=None,
                        help="timed steps per execution (steps_per_execution); "
                             "default 50 for tiny, 5 otherwise")
    parser.add_argument("--executions", type=int, default=3,
                        help="timed executions after the warm-up one; the fastest counts")
    parser.add_argument("--batch_size_tiny", type=int, default=64)
    parser.add_argument("--batch_size_base", type=int, default=8,
                        help="batch size of every preset other than tiny")
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--num_predictions", type=int, default=20)
    parser.add_argument("--note", default="", help="stored in the JSON (e.g. machine load)")
    parser.add_argument("--output", default=None, help="JSON path (default: results/...)")
    args = parser.parse_args()
    result = run(args)
    output = write_result(result, "train_step", args.output)
    print(f"\nfloat32 matmul peak {result['matmul_peak_gflops']:.1f} GFLOP/s\n")
    print(markdown_table(result["rows"]))
    if result["targets_albert_base"]:
        print(f"albert_base targets (XLA >= 1.2x Model Garden's fastest, MFU >= 50%): "
              f"{result['targets_albert_base']}")
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
