"""Small-model pretraining step: examples/s of the mini-scale ablation model, setting by setting.

    python -m albert_lab.benchmarks.small_model_step                       # the mini Table 6 model
    python -m albert_lab.benchmarks.small_model_step --variants trainer plain bf16 --executions 8

The mini scale of the experiments (`experiments/scales/mini.yaml`) trains an ALBERT of hidden
size 64 (E 32, 4 shared layers, 4 heads, feed-forward 256) on batches of 64 x 64 tokens with
10 predictions each, under AdamW. At this size a step is a few MFLOP per example, so the time
goes to everything around the matmuls: op dispatch, small kernels, thread hand-offs. Each
variant below changes one such thing and runs in its own process (XLA flags and thread pools
are fixed when TensorFlow starts), training with `model.fit` exactly as `albert-pretrain` does
(our `AlbertPretrainer`, our optimizer, `steps_per_execution`), on one repeated in-memory batch:

- `trainer`: XLA, 20 steps per execution, TensorFlow's default thread pools: what
  `albert-pretrain` did on CPUs until 2026-12-01 and does with `train.jit_compile: true`
  (the row the others are compared with, as in the results recorded before);
- the others change one thing each (`VARIANTS`): XLA off (`plain`: what `albert-pretrain`
  now does on CPUs, `train.jit_compile: null`), one thread, 100 steps per execution,
  TensorFlow's oneDNN kernels off, mixed bfloat16 (AVX512-BF16), XLA's 512-bit vectors.
  Three XLA CPU options of TensorFlow 2.20 fail on this model and are not listed:
  `--xla_cpu_use_thunk_runtime=false` (an unresolved runtime symbol),
  `--xla_cpu_use_onednn=true` (an unsupported transposed dot) and
  `--xla_cpu_use_xnnpack=true` (a batch-dimension layout error).

Beside them it measures what the model's own matmul shapes reach alone (`SHAPES`: a tf.matmul
of each, no XLA): with hidden size 64 the contractions are 16 to 256 long, far from the
2048-cube the peak is measured on, so the step's ceiling is the rate of those shapes.

One warm-up execution (tracing, compiling), then `--executions` timed ones; the fastest
counts (the machine's speed drifts between minutes). FLOPs from
`albert_tf.flops.pretraining_step_flops`, the peak from a large float32 matmul in the same
process. Prints a table and writes JSON to `benchmarks/results/small_model_step-<host>.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from albert_lab.benchmarks.common import machine, result_path
from albert_lab.result_files import write_result

RESULT_PREFIX = "SMALL_MODEL_RESULT "

# name -> (description, environment, settings). Settings: steps_per_execution, jit_compile,
# threads ("default" or (intra_op, inter_op)).
VARIANTS = {
    "trainer": ("XLA, 20 steps per execution, default threads (train.jit_compile: true)", {},
              {"steps_per_execution": 20, "jit_compile": True, "threads": "default"}),
    "plain": ("no XLA, 20 steps per execution: what albert-pretrain does on CPUs", {},
              {"steps_per_execution": 20, "jit_compile": False, "threads": "default"}),
    "xla_vector512": ("XLA emitting 512-bit vectors",
                      {"XLA_FLAGS": "--xla_cpu_prefer_vector_width=512"},
                      {"steps_per_execution": 20, "jit_compile": True, "threads": "default"}),
    "onednn_off": ("XLA, TensorFlow's oneDNN kernels off", {"TF_ENABLE_ONEDNN_OPTS": "0"},
                   {"steps_per_execution": 20, "jit_compile": True, "threads": "default"}),
    "plain_onednn_off": ("no XLA, TensorFlow's oneDNN kernels off",
                         {"TF_ENABLE_ONEDNN_OPTS": "0"},
                         {"steps_per_execution": 20, "jit_compile": False, "threads": "default"}),
    "bf16": ("XLA, mixed_bfloat16 (AVX512-BF16 matmuls)", {},
             {"steps_per_execution": 20, "jit_compile": True, "threads": "default",
              "precision": "mixed_bfloat16"}),
    "plain_bf16": ("no XLA, mixed_bfloat16", {},
                   {"steps_per_execution": 20, "jit_compile": False, "threads": "default",
                    "precision": "mixed_bfloat16"}),
    "one_thread": ("XLA, one intra-op and one inter-op thread", {},
                   {"steps_per_execution": 20, "jit_compile": True, "threads": (1, 1)}),
    "plain_one_thread": ("no XLA, one intra-op and one inter-op thread (two runs share two "
                         "cores best this way: docs/performance.md)", {},
                         {"steps_per_execution": 20, "jit_compile": False, "threads": (1, 1)}),
    "spe_100": ("XLA, 100 steps per execution", {},
                {"steps_per_execution": 100, "jit_compile": True, "threads": "default"}),
}


# (rows, contraction, columns) of the mini model's matmuls at batch 64 x 64: the projections
# (query/key/value/output), the feed-forward in and out, attention scores per head, the MLM
# output over the vocabulary.
SHAPES = {"projection 64->64": (4096, 64, 64), "feed-forward 64->256": (4096, 64, 256),
          "feed-forward 256->64": (4096, 256, 64), "attention scores (K 16)": (16384, 16, 64),
          "MLM logits 32->1000": (640, 32, 1000), "peak (2048 cube)": (2048, 2048, 2048)}


def shape_rates(repeats: int = 50) -> dict[str, float]:
    """FLOP/s of a lone float32 matmul of each of `SHAPES` (best of 5 runs of `repeats`)."""
    import tensorflow as tf

    @tf.function(autograph=False)
    def matmul(left, right):
        return tf.matmul(left, right)

    rates = {}
    for name, (rows, inner, columns) in SHAPES.items():
        left, right = tf.random.normal((rows, inner)), tf.random.normal((inner, columns))
        matmul(left, right).numpy()
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(repeats):
                product = matmul(left, right)
            product.numpy()
            best = min(best, (time.perf_counter() - start) / repeats)
        rates[name] = 2 * rows * inner * columns / best
    return rates


def mini_config():
    """The mini scale's model (experiments/scales/mini.yaml, pretrain.model)."""
    from albert_tf.config.presets import load_preset
    return load_preset("tiny", [
        "vocab_size=1000", "embedding_size=32", "hidden_size=64", "num_attention_heads=4",
        "intermediate_size=256", "num_layers=4", "hidden_dropout=0.0",
        "attention_dropout=0.0"])


def measure(variant: str, args) -> dict:
    """Runs `variant` in this process; returns its fastest seconds per step and the peak."""
    import tensorflow as tf
    import tf_keras

    from albert_lab.benchmarks.common import measure_matmul_peak
    from albert_lab.benchmarks.train_step import ExecutionTimer, random_pretraining_batch
    from albert_tf.config.precision import precision_policy
    from albert_tf.flops import pretraining_step_flops
    from albert_tf.loop.optimization import OptimizerConfig, create_optimizer
    from albert_tf.models.pretrainer import AlbertPretrainer

    settings = VARIANTS[variant][2]
    if settings["threads"] != "default":
        intra, inter = settings["threads"]
        tf.config.threading.set_intra_op_parallelism_threads(intra)
        tf.config.threading.set_inter_op_parallelism_threads(inter)
    config = mini_config()
    batch = random_pretraining_batch(config, args.batch_size, args.seq_length,
                                     args.num_predictions)
    tf_keras.utils.set_random_seed(0)
    steps = settings["steps_per_execution"]
    with precision_policy(settings.get("precision", "float32")):
        model = AlbertPretrainer(config, "sop")
        model(batch, training=False)
        model.compile(optimizer=create_optimizer(
            OptimizerConfig(type="adamw", learning_rate=2e-3, warmup_steps=500), 1_000_000),
            steps_per_execution=steps, jit_compile=settings["jit_compile"])
    data = tf.data.Dataset.from_tensors(batch).repeat()
    timer = ExecutionTimer()
    seconds = []
    for execution in range(1 + args.executions):
        timer.seconds.clear()
        model.fit(data, epochs=1, steps_per_epoch=steps, callbacks=[timer], verbose=0)
        if execution:
            seconds.append(timer.seconds[0] / steps)
    step = min(seconds)
    flops = pretraining_step_flops(config, args.batch_size, args.seq_length,
                                   args.num_predictions)
    peak = measure_matmul_peak()
    return {"variant": variant, "description": VARIANTS[variant][0],
            "seconds_per_step": step, "examples_per_second": args.batch_size / step,
            "step_flops": flops, "achieved_flops": flops / step, "peak_flops": peak,
            "mfu": flops / step / peak, "all_seconds_per_step": seconds}


def run_variant(variant: str, args) -> dict:
    """`variant` (or "shapes") measured in a process of its own."""
    environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2",
                   **(VARIANTS[variant][1] if variant in VARIANTS else {})}
    command = [sys.executable, "-m", __spec__.name, "--child", variant, "--batch_size",
               str(args.batch_size), "--seq_length", str(args.seq_length),
               "--num_predictions", str(args.num_predictions), "--executions",
               str(args.executions)]
    output = subprocess.run(command, env=environment, capture_output=True, text=True,
                            check=False)
    for line in output.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    raise RuntimeError(f"variant {variant} failed:\n{output.stderr[-3000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--seq_length", type=int, default=64)
    parser.add_argument("--num_predictions", type=int, default=10)
    parser.add_argument("--executions", type=int, default=5)
    parser.add_argument("--child", choices=[*VARIANTS, "shapes"], help=argparse.SUPPRESS)
    parser.add_argument("--output", default=None, help="JSON path (default: results/...)")
    args = parser.parse_args()
    if args.child:
        result = shape_rates() if args.child == "shapes" else measure(args.child, args)
        print(RESULT_PREFIX + json.dumps(result), flush=True)
        return
    rows = []
    print(f"{'variant':<18}{'ms/step':>9}{'examples/s':>12}{'MFU':>7}{'x trainer':>11}  setting")
    for variant in args.variants:
        rows.append(run_variant(variant, args))
        row = rows[-1]
        trainer = next((r for r in rows if r["variant"] == "trainer"), row)
        row["times_trainer"] = row["examples_per_second"] / trainer["examples_per_second"]
        print(f"{variant:<18}{1000 * row['seconds_per_step']:>9.1f}"
              f"{row['examples_per_second']:>12,.0f}{row['mfu']:>7.1%}"
              f"{row['times_trainer']:>11.2f}  {row['description']}", flush=True)
    shapes = run_variant("shapes", args)
    print("a lone float32 matmul of the model's shapes: " + ", ".join(
        f"{name} {rate / 1e9:.0f} GFLOP/s" for name, rate in shapes.items()))
    result = {"benchmark": "small_model_step", **machine(),
              "matmul_shape_flops_per_second": shapes,
              "settings": {"model": "mini (H 64, E 32, 4 layers, 4 heads, FF 256, V 1000)",
                           "batch_size": args.batch_size, "seq_length": args.seq_length,
                           "num_predictions": args.num_predictions},
              "rows": rows, "timestamp": time.time()}
    print(f"wrote {write_result(result_path('small_model_step', result, args.output), result)}")


if __name__ == "__main__":
    main()
