"""Where a pretraining step's time goes: a TensorBoard profiler trace and a table of op costs.

    python -m albert_lab.benchmarks.profile_step                        # albert_base, plain and XLA
    python -m albert_lab.benchmarks.profile_step --model tiny --batch_size 64 --steps 10
    tensorboard --logdir benchmarks/profiles    # with tensorboard-plugin-profile installed

For each mode (plain, XLA) it builds our `AlbertPretrainer` as `train_step.py` does, runs one
warm-up execution, then traces `--steps` steps with `tf.profiler.experimental` into
`--logdir` (the trace TensorBoard's Profile tab opens). It then reads the trace back (the
XSpace protobuf TensorFlow writes, through the `xplane_pb2` module TensorFlow ships) and sums
the self time of every event on the threads that run the step's ops, so nested events are not
counted twice:
- plain: TensorFlow ops, grouped by op type (MatMul, Einsum, Mul, ...) and by op name with
  the layer indices and the step's while-loop prefix removed, so the twelve applications of a
  shared layer add up;
- XLA: the compiled program's thunks (dot, the fusions, reduce-window, ...) with their numeric
  suffixes removed. Thunks that run on the calling thread are not traced one by one; their time
  shows as the executor's own time.
Shares are of the op time (events naming an op or a thunk; the rest is reported as
unattributed), which the profiler's own cost inflates (a traced step is slower than an
untraced one; `train_step.py` gives the real step time). Prints the tables and
writes JSON to `benchmarks/results/profile_step-<host>.json`.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import time

import tensorflow as tf

from albert_lab.benchmarks.common import machine, result_path
from albert_lab.benchmarks.summary import profile_table
from albert_lab.benchmarks.trace_analysis import breakdown, read_space, self_times
from albert_lab.benchmarks.train_step import compiled_trainer, random_pretraining_batch
from albert_lab.result_files import write_result
from albert_tf.config.presets import load_preset


def profile_mode(args, config, batch, jit_compile: bool) -> dict:
    logdir = os.path.join(args.logdir, f"{args.model}_{'xla' if jit_compile else 'plain'}")
    shutil.rmtree(logdir, ignore_errors=True)
    model = compiled_trainer("albert_tf", config, batch, jit_compile, args.steps)
    data = tf.data.Dataset.from_tensors(batch).repeat()
    model.fit(data, epochs=1, steps_per_epoch=args.steps, verbose=0)  # trace and compile
    tf.profiler.experimental.start(logdir)
    start = time.perf_counter()
    model.fit(data, epochs=1, steps_per_epoch=args.steps, verbose=0)
    seconds = (time.perf_counter() - start) / args.steps
    tf.profiler.experimental.stop()
    result = breakdown(self_times(read_space(logdir)), args.steps, args.top)
    return {"xla": jit_compile, "logdir": logdir, "profiled_step_seconds": seconds, **result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="albert_base")
    parser.add_argument("--override", action="append", default=[], metavar="FIELD=VALUE",
                        help="change a field of the preset, e.g. hidden_size=64; repeatable")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--num_predictions", type=int, default=20)
    parser.add_argument("--steps", type=int, default=2, help="traced steps per mode")
    parser.add_argument("--modes", nargs="+", default=["plain", "xla"], choices=["plain", "xla"])
    parser.add_argument("--top", type=int, default=15, help="rows per table")
    parser.add_argument("--logdir", default=str(pathlib.Path("benchmarks", "profiles")))
    parser.add_argument("--output", default=None, help="JSON path (default: results/...)")
    args = parser.parse_args()
    config = load_preset(args.model, args.override)
    batch = random_pretraining_batch(config, args.batch_size, args.seq_length,
                                     args.num_predictions)
    modes = [profile_mode(args, config, batch, mode == "xla") for mode in args.modes]
    for result in modes:
        print("\n" + profile_table(result))
    result = {"benchmark": "profile_step", **machine(), "model": args.model,
              "batch_size": args.batch_size, "seq_length": args.seq_length,
              "steps": args.steps, "tensorflow": tf.__version__, "modes": modes}
    output = write_result(result_path("profile_step", result, args.output), result)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
