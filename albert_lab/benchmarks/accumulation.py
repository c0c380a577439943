"""Gradient accumulation: one update of batch B as N micro-batches of B / N, against the
plain step of batch B; peak memory and examples per second.

    python -m albert_lab.benchmarks.accumulation                           # albert_base, 32 = 8 x 4
    python -m albert_lab.benchmarks.accumulation --model tiny --batch_size 64 --micro_batches 4 8

Each variant runs in its own process (started by this script), so its peak memory is its
own: the process's peak RSS on a CPU, the device's peak allocation on a GPU or TPU. Every
variant takes the same update (the same gradient,
`tests/albert_tf/models/test_accumulation.py`); what accumulation trades is activation
memory (one micro-batch's at a time) for smaller matmuls and N passes over the weights per
update. The FLOPs of an update are the same for every
variant (`albert_tf.flops.pretraining_step_flops` of the whole batch).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

from albert_lab.benchmarks.common import device_peak_memory_gib, machine, result_path
from albert_lab.benchmarks.summary import accumulation_table
from albert_lab.result_files import write_result

RESULT_PREFIX = "ACCUMULATION_RESULT "


def measure(args) -> dict:
    """One variant in this process: seconds per update of `args.variant` micro-batches."""
    import numpy as np
    import tensorflow as tf
    import tf_keras

    from albert_lab.benchmarks.train_step import (
        DECAY_STEPS,
        ExecutionTimer,
        random_pretraining_batch,
    )
    from albert_tf.config.presets import load_preset
    from albert_tf.flops import pretraining_step_flops
    from albert_tf.loop.optimization import OptimizerConfig, create_optimizer
    from albert_tf.models.pretrainer import AlbertPretrainer

    config = load_preset(args.model)
    batch = random_pretraining_batch(config, args.batch_size, args.seq_length,
                                     args.num_predictions)
    tf_keras.utils.set_random_seed(0)
    model = AlbertPretrainer(config, "sop", gradient_accumulation_steps=args.variant)
    model(batch, training=False)
    model.compile(optimizer=create_optimizer(OptimizerConfig(), DECAY_STEPS),
                  steps_per_execution=args.steps, jit_compile=args.xla)
    data = tf.data.Dataset.from_tensors(batch).repeat()
    timer = ExecutionTimer()
    seconds = []
    for execution in range(1 + args.executions):  # the first traces and compiles
        timer.seconds.clear()
        model.fit(data, epochs=1, steps_per_epoch=args.steps, callbacks=[timer], verbose=0)
        if execution:
            seconds.append(timer.seconds[0] / args.steps)
    step = min(seconds)
    flops = pretraining_step_flops(config, args.batch_size, args.seq_length,
                                   args.num_predictions)
    return {"micro_batches": args.variant, "micro_batch_size": args.batch_size // args.variant,
            "step_seconds": step, "step_seconds_per_execution": seconds,
            "examples_per_second": args.batch_size / step,
            "achieved_gflops": flops / step / 1e9,
            "device_peak_memory_gib": device_peak_memory_gib(),
            "final_loss": float(np.asarray(model.evaluate(data, steps=1, verbose=0)[0]))}


def run_variant(args, micro_batches: int) -> dict:
    """`measure` in a child process; adds its peak RSS (from wait4)."""
    command = [sys.executable, "-m", __spec__.name, "--variant", str(micro_batches),
               *_shared_arguments(args)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    result = None
    for line in process.stdout:
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX):])
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) or result is None:
        raise SystemExit(f"accumulation benchmark: the variant with {micro_batches} "
                         f"micro-batches failed ({shlex.join(command)})")
    result["peak_rss_gib"] = usage.ru_maxrss / 2 ** 20  # KiB on Linux
    return result


def _shared_arguments(args) -> list[str]:
    shared = ["--model", args.model, "--batch_size", str(args.batch_size),
              "--seq_length", str(args.seq_length), "--num_predictions",
              str(args.num_predictions), "--steps", str(args.steps),
              "--executions", str(args.executions)]
    return shared + (["--xla"] if args.xla else [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="albert_base", help="a model preset")
    parser.add_argument("--batch_size", type=int, default=32, help="examples per update")
    parser.add_argument("--micro_batches", type=int, nargs="+", default=[4],
                        help="N of the accumulating variants (the plain step, N = 1, always "
                             "runs first)")
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--num_predictions", type=int, default=20)
    parser.add_argument("--steps", type=int, default=2, help="updates per execution")
    parser.add_argument("--executions", type=int, default=2,
                        help="timed executions after the warm-up one; the fastest counts")
    parser.add_argument("--xla", action="store_true", help="jit_compile the step")
    parser.add_argument("--variant", type=int, help=argparse.SUPPRESS)  # child process
    parser.add_argument("--output", default=None, help="JSON path (default: results/...)")
    args = parser.parse_args()
    if args.variant:
        print(RESULT_PREFIX + json.dumps(measure(args)), flush=True)
        return
    for micro_batches in args.micro_batches:
        if args.batch_size % micro_batches:
            parser.error(f"--batch_size {args.batch_size} does not split into {micro_batches}")
    started = time.perf_counter()
    rows = []
    for micro_batches in [1, *args.micro_batches]:
        rows.append(run_variant(args, micro_batches))
        print(f"  {micro_batches} x {args.batch_size // micro_batches}: "
              f"{rows[-1]['examples_per_second']:.1f} examples/s, peak RSS "
              f"{rows[-1]['peak_rss_gib']:.2f} GiB", flush=True)
    result = {"benchmark": "accumulation", **machine(), "model": args.model,
              "batch_size": args.batch_size, "seq_length": args.seq_length,
              "num_predictions": args.num_predictions, "xla": args.xla,
              "minutes": (time.perf_counter() - started) / 60, "rows": rows}
    output = write_result(result_path("accumulation", result, args.output), result)
    print("\n" + accumulation_table(result) + f"\nwrote {output}")


if __name__ == "__main__":
    main()
