"""Encoder forward + backward step: examples/s and model-FLOPs utilisation, ours vs Model Garden.

    python -m albert_lab.benchmarks.encoder_step                     # tiny and albert_base, seq 128
    python -m albert_lab.benchmarks.encoder_step --presets albert_base --batch_size 16 --steps 10

For each preset it times one gradient computation of the encoder (a training step without the
pretraining heads and the optimizer update, which later benchmarks add), as a tf.function with
and without XLA, for our `AlbertEncoder` and the Model Garden `AlbertEncoder` of
tf-models-official in the same process. FLOPs come from `albert_tf.flops`; the peak is a large
float32 matmul measured in the same run. Prints a table and writes JSON to
`benchmarks/results/encoder_step-<host>.json`.
"""

from __future__ import annotations

import argparse
import os
import time

import psutil
import tensorflow as tf

from albert_lab.benchmarks.common import device_info, machine, measure_matmul_peak, result_path
from albert_lab.result_files import write_result
from albert_tf.checkpoints.model_garden import model_garden_encoder
from albert_tf.config.presets import load_preset
from albert_tf.flops import encoder_training_flops
from albert_tf.models.encoder import AlbertEncoder, random_encoder_inputs


def make_step(encoder, jit_compile: bool):
    variables = encoder.trainable_variables

    @tf.function(jit_compile=jit_compile)
    def step(inputs):
        with tf.GradientTape() as tape:
            outputs = encoder(inputs, training=True)
            loss = (tf.reduce_mean(tf.square(outputs["sequence_output"]))
                    + tf.reduce_mean(tf.square(outputs["pooled_output"])))
        gradients = tape.gradient(loss, variables)
        return loss, tf.linalg.global_norm(gradients)

    return step


def time_step(step, inputs, steps: int, warmup: int) -> float:
    for _ in range(warmup):
        [t.numpy() for t in step(inputs)]
    start = time.perf_counter()
    for _ in range(steps):
        [t.numpy() for t in step(inputs)]
    return (time.perf_counter() - start) / steps


def run(args) -> dict:
    peak = measure_matmul_peak()
    print(f"measured float32 matmul peak: {peak / 1e9:.1f} GFLOP/s "
          f"({os.cpu_count()} logical CPUs)")
    rows = []
    for preset in args.presets.split(","):
        config = load_preset(preset)
        inputs = random_encoder_inputs(config, args.batch_size, args.seq_length)
        flops = encoder_training_flops(config, args.batch_size, args.seq_length)
        builders = {"albert_tf": AlbertEncoder}
        if not args.skip_model_garden:
            builders["model_garden"] = model_garden_encoder
        for implementation, build in builders.items():
            encoder = build(config)
            for jit_compile in (False, True):
                seconds = time_step(make_step(encoder, jit_compile), inputs, args.steps,
                                    args.warmup)
                row = {"preset": preset, "implementation": implementation,
                       "xla": jit_compile, "batch_size": args.batch_size,
                       "seq_length": args.seq_length, "step_seconds": seconds,
                       "examples_per_second": args.batch_size / seconds,
                       "gflop_per_step": flops / 1e9,
                       "achieved_gflops": flops / seconds / 1e9,
                       "mfu": flops / seconds / peak,
                       "rss_gib": psutil.Process().memory_info().rss / 2 ** 30}
                rows.append(row)
                print(format_row(row), flush=True)
    return {"benchmark": "encoder_step", **machine(),
            "tensorflow": tf.__version__, **device_info(tf.distribute.get_strategy()),
            "matmul_peak_gflops": peak / 1e9, "rows": rows}


HEADER = (f"{'preset':<13}{'implementation':<15}{'xla':<6}{'step ms':>10}{'ex/s':>9}"
          f"{'GFLOP/s':>10}{'MFU':>7}{'RSS GiB':>9}")


def format_row(row) -> str:
    return (f"{row['preset']:<13}{row['implementation']:<15}{str(row['xla']):<6}"
            f"{row['step_seconds'] * 1e3:>10.1f}{row['examples_per_second']:>9.1f}"
            f"{row['achieved_gflops']:>10.1f}{row['mfu'] * 100:>6.1f}%{row['rss_gib']:>9.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", default="tiny,albert_base")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--skip_model_garden", action="store_true")
    parser.add_argument("--output", default=None, help="JSON path (default: results/...)")
    args = parser.parse_args()
    print(HEADER)
    result = run(args)
    output = write_result(result_path("encoder_step", result, args.output), result)
    print(f"\n{HEADER}\n" + "\n".join(format_row(row) for row in result["rows"]))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
