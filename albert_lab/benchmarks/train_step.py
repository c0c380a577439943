"""Pretraining train step: examples/s and model-FLOPs utilisation, ours vs Model Garden.

    python -m albert_lab.benchmarks.train_step                       # tiny and albert_base, seq 128
    python -m albert_lab.benchmarks.train_step --models albert_base --batch_size_base 8 --steps 5

For each preset it trains, with `model.fit` on one repeated in-memory batch (random ids, 20
masked positions of weight 1, random SOP labels), two models under the same optimizer (our
LAMB from `albert_tf.loop.optimization`) and the same losses (`albert_tf.models.pretrainer`):
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
The BERT presets (`bert_base`, `bert_large`: our encoder with one unshared block per layer and
E = H) run our implementation only, so the ALBERT/BERT step-time ratios of the paper's Table 3
can be read off one run (`table3` in the JSON). Variants: `--modes` (plain, xla) x
`--precisions` (float32 and, with `auto`, the mixed-precision policy the device runs fast:
bf16 on TPUs, Ampere GPUs and CPUs with AVX512-BF16/AMX, fp16 on Volta/Turing GPUs).
`--strategy` picks the device as `albert-pretrain` does (default: the GPU if there is one,
else the CPU; `tpu` with `--tpu`); the JSON records the device.
Prints a markdown table and writes JSON to `benchmarks/results/train_step-<host>.json`.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import resource
import time

import numpy as np
import psutil
import tensorflow as tf
import tf_keras

from albert_lab.benchmarks.common import (
    device_info,
    device_peak_memory_gib,
    machine,
    measure_matmul_peak,
    result_path,
)
from albert_lab.benchmarks.summary import table3_table, train_step_table
from albert_lab.result_files import write_result
from albert_tf.checkpoints.model_garden import model_garden_encoder
from albert_tf.config.precision import precision_policy
from albert_tf.config.presets import load_preset
from albert_tf.flops import pretraining_step_flops
from albert_tf.loop.distribute import STRATEGIES, DistributionConfig, create_strategy
from albert_tf.loop.optimization import OptimizerConfig, create_optimizer
from albert_tf.models.encoder import INPUT_NAMES, random_encoder_inputs
from albert_tf.models.pretrainer import AlbertPretrainer, masked_lm_loss, sentence_loss

DECAY_STEPS = 1_000_000  # any number above the default warm-up; the schedule does not matter
DEFAULT_STEPS = {"tiny": 50}  # steps per execution; other presets: 5
# Table 3 of the paper: data throughput relative to BERT-xlarge on the same hardware.
PAPER_SPEEDUP = {"bert_base": 17.7, "bert_large": 3.8, "bert_xlarge": 1.0,
                 "albert_base": 21.1, "albert_large": 6.5, "albert_xlarge": 2.4}


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
        # Under mixed precision the heads emit float16/bfloat16 logits; the masked_lm task
        # casts them to float32 before its losses, as our heads do themselves.
        return {"mlm_logits": tf.cast(outputs["mlm_logits"], tf.float32),
                "sentence_logits": tf.cast(outputs["next_sentence"], tf.float32)}

    def train_step(self, features):
        with tf.GradientTape() as tape:
            outputs = self(features, training=True)
            mlm_loss = masked_lm_loss(outputs["mlm_logits"], features["masked_lm_ids"],
                                      features["masked_lm_weights"])
            next_sentence_loss = sentence_loss(outputs["sentence_logits"],
                                               features["next_sentence_labels"])
            loss = mlm_loss + next_sentence_loss
        # minimize() drops the pooler's missing gradients and scales the loss under fp16.
        self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
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


def compiled_trainer(implementation: str, config, batch, jit_compile: bool, steps: int,
                     precision: str = "float32"):
    """A built model of `implementation` under the `precision` policy, compiled with our LAMB
    (tf_keras wraps it in a loss-scale optimizer under mixed_float16), `steps` steps per
    execution. Call it inside the strategy's scope."""
    tf_keras.utils.set_random_seed(0)
    with precision_policy(precision):
        model = BUILDERS[implementation](config)
        model(batch, training=False)
        model.compile(optimizer=create_optimizer(OptimizerConfig(), DECAY_STEPS),
                      steps_per_execution=steps, jit_compile=jit_compile)
    return model


def time_in_turns(trainers: dict, batches: dict, steps: int,
                  executions: int) -> dict[tuple, list]:
    """Seconds per step of each trainer's timed executions, each on its batch (same keys).
    The trainers take turns, one execution each per round, so a drift of the machine's speed
    hits all of them alike; the first round (tracing and compiling) is the warm-up."""
    data = {key: tf.data.Dataset.from_tensors(batch).repeat() for key, batch in batches.items()}
    timer = ExecutionTimer()
    times = {key: [] for key in trainers}
    for round_ in range(1 + executions):
        for key, model in trainers.items():
            timer.seconds.clear()
            model.fit(data[key], epochs=1, steps_per_epoch=steps, callbacks=[timer], verbose=0)
            if round_:
                times[key].append(timer.seconds[0] / steps)
        print(f"  round {round_}: " + ", ".join(
            f"{variant_name(*key)} {timer_ms(times[key])}" for key in trainers),
            flush=True)
    return times


def timer_ms(seconds: list[float]) -> str:
    return f"{seconds[-1] * 1e3:.0f} ms/step" if seconds else "warm-up"


def variant_name(preset: str, implementation: str, jit_compile: bool, precision: str) -> str:
    return (f"{preset} {implementation}" + (" XLA" if jit_compile else "")
            + ("" if precision == "float32" else f" {precision}"))


def size_groups(presets: list[str]) -> list[list[str]]:
    """Presets grouped by size (albert_base with bert_base, ...) in their first-seen order:
    a group's models take turns in one timing loop, so their ratios share the same moments."""
    groups: dict[str, list[str]] = {}
    for preset in presets:
        groups.setdefault(preset.rsplit("_", 1)[-1], []).append(preset)
    return list(groups.values())


def implementations_for(preset: str, requested: list[str]) -> list[str]:
    """Model Garden's AlbertEncoder shares its one block over all layers and factorizes the
    embedding, so it cannot build a BERT preset; those run ours only."""
    if preset.startswith("bert"):
        return [name for name in requested if name == "albert_tf"]
    return requested


def run_group(args, presets: list[str], strategy, precisions: list[str]) -> list[dict]:
    """Times every variant of the presets of one size group in turns; one row per variant."""
    configs = {preset: load_preset(preset) for preset in presets}
    batch_size = args.batch_size_tiny if presets == ["tiny"] else args.batch_size_base
    steps = args.steps or DEFAULT_STEPS.get(presets[0], 5)
    batches = {preset: random_pretraining_batch(config, batch_size, args.seq_length,
                                                args.num_predictions)
               for preset, config in configs.items()}
    print(f"{', '.join(presets)}: batch {batch_size}, {steps} steps per execution", flush=True)
    tf_keras.backend.clear_session()
    keys = [(preset, implementation, mode == "xla", precision) for preset in presets
            for implementation in implementations_for(preset, args.implementations)
            for mode in args.modes for precision in precisions]
    with strategy.scope():
        trainers = {key: compiled_trainer(key[1], configs[key[0]], batches[key[0]], key[2],
                                          steps, key[3]) for key in keys}
    times = time_in_turns(trainers, {key: batches[key[0]] for key in keys}, steps,
                          args.executions)
    memory = {"rss_gib": psutil.Process().memory_info().rss / 2 ** 30,
              "peak_rss_gib_so_far": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20,
              "device_peak_memory_gib": device_peak_memory_gib(),
              "load_average_1min": os.getloadavg()[0]}
    rows = []
    for (preset, implementation, jit_compile, precision), per_execution in times.items():
        seconds = min(per_execution)
        flops = pretraining_step_flops(configs[preset], batch_size, args.seq_length,
                                       args.num_predictions)
        rows.append({"model": preset, "implementation": implementation, "xla": jit_compile,
                     "precision": precision,
                     "batch_size": batch_size, "seq_length": args.seq_length,
                     "num_predictions": args.num_predictions, "steps_per_execution": steps,
                     "step_seconds": seconds,
                     "step_seconds_median": float(np.median(per_execution)),
                     "step_seconds_per_execution": per_execution,
                     "examples_per_second": batch_size / seconds, "gflop_per_step": flops / 1e9,
                     "achieved_gflops": flops / seconds / 1e9, **memory})
    add_speedups(rows)
    return rows


def add_speedups(rows: list[dict]) -> None:
    """Our step time's speed-up over Model Garden's for the same preset, mode and precision,
    and over its fastest mode in that precision."""
    garden = {(r["model"], r["xla"], r["precision"]): r["step_seconds"] for r in rows
              if r["implementation"] == "model_garden"}
    for row in rows:
        key = (row["model"], row["xla"], row["precision"])
        if row["implementation"] == "albert_tf" and key in garden:
            row["speedup_over_model_garden"] = garden[key] / row["step_seconds"]
            row["speedup_over_fastest_model_garden"] = min(
                seconds for (model, _, precision), seconds in garden.items()
                if (model, precision) == (key[0], key[2])) / row["step_seconds"]


def table3_ratios(rows: list[dict]) -> list[dict]:
    """ALBERT's speed-up over BERT of the same size (step time of bert_X over albert_X, our
    implementation, same mode and precision), beside the paper's Table 3 ratio."""
    ours = {(r["model"], r["xla"], r["precision"]): r for r in rows
            if r["implementation"] == "albert_tf"}
    ratios = []
    for (model, jit_compile, precision), albert in ours.items():
        bert = ours.get((model.replace("albert_", "bert_"), jit_compile, precision))
        if not model.startswith("albert_") or bert is None:
            continue
        if bert["batch_size"] != albert["batch_size"]:
            continue
        size = model.split("_", 1)[1]
        ratios.append({"size": size, "xla": jit_compile, "precision": precision,
                       "albert_step_seconds": albert["step_seconds"],
                       "bert_step_seconds": bert["step_seconds"],
                       "albert_over_bert_speedup": bert["step_seconds"] / albert["step_seconds"],
                       "paper_albert_over_bert_speedup": (PAPER_SPEEDUP[model]
                                                          / PAPER_SPEEDUP[f"bert_{size}"])})
    return ratios


def target_summary(rows: list[dict]) -> dict:
    """The issue's targets for albert_base in float32: our XLA step >= 1.2x Model Garden's
    (its fastest mode), MFU >= 50%."""
    ours = [r for r in rows if r["model"] == "albert_base" and r["xla"]
            and r["implementation"] == "albert_tf" and r["precision"] == "float32"]
    if not ours or "speedup_over_model_garden" not in ours[0]:
        return {}
    row = ours[0]
    return {"speedup_over_model_garden_xla": row["speedup_over_model_garden"],
            "speedup_over_fastest_model_garden": row["speedup_over_fastest_model_garden"],
            "mfu": row["mfu"],
            "met": (row["speedup_over_fastest_model_garden"] >= 1.2 and row["mfu"] >= 0.5)}


def compute_dtype(precision: str) -> str:
    return {"mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}.get(precision, "float32")


def run(args) -> dict:
    strategy = create_strategy(DistributionConfig(strategy=args.strategy, tpu=args.tpu))
    device = device_info(strategy)
    precisions = list(args.precisions)
    if "auto" in precisions:
        precisions = ["float32"] + ([device["mixed_precision"]] if device["mixed_precision"]
                                    else [])
    print(f"device: {device['device']} ({device['device_name']}), precisions: "
          f"{', '.join(precisions)}; mixed precision: {device['mixed_precision_reason']}",
          flush=True)
    dtypes = sorted({compute_dtype(p) for p in precisions})

    def peaks() -> dict[str, float]:
        with strategy.scope():
            return {dtype: measure_matmul_peak(dtype=dtype) for dtype in dtypes}

    peaks_before = peaks()
    print("measured matmul peak: " + ", ".join(f"{d} {v / 1e9:.1f} GFLOP/s"
                                                for d, v in peaks_before.items()), flush=True)
    rows = [row for group in size_groups(args.models)
            for row in run_group(args, group, strategy, precisions)]
    peaks_after = peaks()
    peak = {dtype: max(peaks_before[dtype], peaks_after[dtype]) for dtype in dtypes}
    for row in rows:  # MFU against the higher of the two peak measurements of its dtype
        row["mfu"] = row["achieved_gflops"] * 1e9 / peak[compute_dtype(row["precision"])]
    return {"benchmark": "train_step", **machine(), **device, "tensorflow": tf.__version__,
            "tf_keras": tf_keras.__version__,
            "tf_models_official": importlib.metadata.version("tf-models-official"),
            "strategy": args.strategy,
            "optimizer": "albert_tf.loop.optimization.Lamb (OptimizerConfig defaults)",
            "matmul_peak_gflops": peak["float32"] / 1e9 if "float32" in peak else None,
            "matmul_peak_gflops_by_dtype": {d: v / 1e9 for d, v in peak.items()},
            "matmul_peak_gflops_before_after": {d: [peaks_before[d] / 1e9, peaks_after[d] / 1e9]
                                                for d in dtypes},
            "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20,
            "executions": args.executions, "note": args.note,
            "targets_albert_base": target_summary(rows), "table3": table3_ratios(rows),
            "rows": rows}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["tiny", "albert_base"],
                        help="model presets (configs/models), e.g. bert_base")
    parser.add_argument("--implementations", nargs="+", default=list(BUILDERS),
                        choices=list(BUILDERS))
    parser.add_argument("--modes", nargs="+", default=["plain", "xla"], choices=["plain", "xla"])
    parser.add_argument("--precisions", nargs="+", default=["auto"],
                        choices=["auto", "float32", "mixed_bfloat16", "mixed_float16"],
                        help="auto: float32 and the mixed policy the device runs fast, if any")
    parser.add_argument("--strategy", default="default", choices=STRATEGIES)
    parser.add_argument("--tpu", default="", help="with --strategy tpu: its name or address")
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
    output = write_result(result_path("train_step", result, args.output), result)
    print(f"\nmatmul peak (GFLOP/s): {result['matmul_peak_gflops_by_dtype']}\n")
    print(train_step_table(result["rows"]))
    if result["table3"]:
        print("\n" + table3_table(result["table3"]))
    if result["targets_albert_base"]:
        print(f"albert_base targets (XLA >= 1.2x Model Garden's fastest, MFU >= 50%): "
              f"{result['targets_albert_base']}")
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
