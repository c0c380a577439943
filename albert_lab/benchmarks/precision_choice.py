"""Float32 against mixed bfloat16, model size by model size: the measurements behind
`train.precision: auto`'s rule (`albert_tf.config.precision`).

    python -m albert_lab.benchmarks.precision_choice --sizes tiny small_h64 small_h128 small_h256
    python -m albert_lab.benchmarks.precision_choice --sizes h384 h512 albert_base
    python -m albert_lab.benchmarks.precision_choice --sizes albert_large --steps 2 --executions 2

For each size it trains our `AlbertPretrainer` (sentence objective sop, our LAMB) on one
repeated in-memory batch with `model.fit`, as `albert_lab.benchmarks.train_step` does, in
each of `--modes` (plain, XLA) x precision (float32, mixed_bfloat16). A size's variants
take turns, one execution of its steps each per round (so a drift of the machine's speed hits
all alike); the first round (tracing, compiling) is a warm-up and each variant's fastest
timed execution counts. Beside the steps: the rates of a 2048-cube matmul in float32 and
bfloat16 (the peaks MFU is counted against, per compute dtype) and of each size's
feed-forward matmul alone, (batch x sequence) x H x 4H, in both types.

The sizes: the `tiny` preset at batch 64; the small scale's shapes of the ablation tables
(`experiments/scales/small.yaml`: H 64 x 4 layers, E 32, 8,000 pieces, batch 64; Table 4's
H 128, Table 10's H 256); between them and albert_base, H 384 and H 512 (4 layers,
feed-forward 4H, albert_base's vocabulary and E); `albert_base` and `albert_large` at
batch 8. Sequences of 128 with 20 predictions throughout.

Prints a table per size and merges its rows into
`benchmarks/results/precision_choice-<host>.json` by size (a run of some sizes keeps the
others' rows), so the sizes can be measured in separate runs of a few minutes each.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402

from albert_lab.benchmarks.common import (  # noqa: E402
    device_info,
    machine,
    matmul_rate,
    measure_matmul_peak,
    result_path,
)
from albert_lab.benchmarks.summary import precision_choice_table  # noqa: E402
from albert_lab.benchmarks.train_step import (  # noqa: E402
    compiled_trainer,
    random_pretraining_batch,
    time_in_turns,
)
from albert_lab.result_files import write_result  # noqa: E402
from albert_tf.config.presets import load_preset  # noqa: E402
from albert_tf.flops import pretraining_step_flops  # noqa: E402

PRECISIONS = ("float32", "mixed_bfloat16")
_SMALL = ("vocab_size=8000", "embedding_size=32", "num_layers=4", "hidden_dropout=0.0",
          "attention_dropout=0.0")


def _between(hidden_size: int) -> tuple[str, ...]:
    return (f"hidden_size={hidden_size}", f"intermediate_size={4 * hidden_size}",
            f"num_attention_heads={hidden_size // 64}", "num_layers=4")


# name -> (preset, overrides, batch size, steps per execution)
SIZES = {
    "tiny": ("tiny", (), 64, 20),
    "small_h64": ("tiny", (*_SMALL, "hidden_size=64", "intermediate_size=256",
                           "num_attention_heads=4"), 64, 10),
    "small_h128": ("tiny", (*_SMALL, "hidden_size=128", "intermediate_size=512",
                            "num_attention_heads=4"), 64, 5),
    "small_h256": ("tiny", (*_SMALL, "hidden_size=256", "intermediate_size=1024",
                            "num_attention_heads=8"), 64, 3),
    "h384": ("albert_base", _between(384), 8, 5),
    "h512": ("albert_base", _between(512), 8, 5),
    "albert_base": ("albert_base", (), 8, 5),
    "albert_large": ("albert_large", (), 8, 2),
}
SEQ_LENGTH, PREDICTIONS = 128, 20


def measure_size(name: str, args, peaks: dict[str, float]) -> dict:
    """Every (mode, precision) variant of size `name`, timed in turns; its feed-forward
    matmul's rate in both types."""
    preset, overrides, batch_size, steps = SIZES[name]
    steps = args.steps or steps
    config = load_preset(preset, list(overrides))
    batch = random_pretraining_batch(config, batch_size, SEQ_LENGTH, PREDICTIONS)
    print(f"{name}: H {config.hidden_size} x {config.num_layers} layers, batch {batch_size}, "
          f"{steps} steps per execution", flush=True)
    tf_keras.backend.clear_session()
    keys = [("precision", "albert_tf", mode == "xla", precision) for mode in args.modes
            for precision in PRECISIONS]
    trainers = {key: compiled_trainer("albert_tf", config, batch, key[2], steps, key[3])
                for key in keys}
    times = time_in_turns(trainers, {key: batch for key in keys}, steps, args.executions)
    flops = pretraining_step_flops(config, batch_size, SEQ_LENGTH, PREDICTIONS)
    rows = []
    for (_, _, jit_compile, precision), seconds in times.items():
        step = min(seconds)
        dtype = "bfloat16" if precision == "mixed_bfloat16" else "float32"
        rows.append({"xla": jit_compile, "precision": precision, "step_seconds": step,
                     "step_seconds_per_execution": seconds,
                     "examples_per_second": batch_size / step,
                     "achieved_gflops": flops / step / 1e9,
                     "mfu": flops / step / peaks[dtype]})
    tokens = batch_size * SEQ_LENGTH
    feed_forward = {dtype: matmul_rate(tokens, config.hidden_size, config.intermediate_size,
                                       dtype) / 1e9 for dtype in ("float32", "bfloat16")}
    return {"size": name, "preset": preset, "overrides": list(overrides),
            "hidden_size": config.hidden_size, "num_layers": config.num_layers,
            "batch_size": batch_size, "seq_length": SEQ_LENGTH, "num_predictions": PREDICTIONS,
            "steps_per_execution": steps, "gflop_per_step": flops / 1e9,
            "feed_forward_matmul_gflops": feed_forward,
            "measured": time.strftime("%Y-%m-%dT%H:%M:%S"), "rows": rows}


def merged(path: pathlib.Path, result: dict) -> dict:
    """`result` with the sizes an earlier result at `path` measured and this one did not."""
    if not path.exists():
        return result
    earlier = json.loads(path.read_text())
    sizes = {**earlier.get("sizes", {}), **result["sizes"]}
    return {**result, "sizes": {name: sizes[name] for name in SIZES if name in sizes}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", choices=list(SIZES), default=list(SIZES))
    parser.add_argument("--modes", nargs="+", default=["plain", "xla"], choices=["plain", "xla"])
    parser.add_argument("--steps", type=int, default=None,
                        help="steps per execution (default: per size, 2 to 20)")
    parser.add_argument("--executions", type=int, default=3,
                        help="timed executions after the warm-up one; the fastest counts")
    parser.add_argument("--output", default=None, help="JSON path (default: results/...)")
    args = parser.parse_args()
    strategy = tf.distribute.get_strategy()
    info = device_info(strategy)
    print(f"device: {info['device']} ({info['device_name']}); bfloat16 flags: "
          f"{', '.join(info['cpu_bfloat16_flags']) or 'none'}", flush=True)
    peaks = {dtype: measure_matmul_peak(dtype=dtype) for dtype in ("float32", "bfloat16")}
    print("matmul peak: " + ", ".join(f"{d} {v / 1e9:.0f} GFLOP/s" for d, v in peaks.items()),
          flush=True)
    sizes = {}
    for name in args.sizes:
        sizes[name] = {**measure_size(name, args, peaks),
                       "matmul_peak_gflops": {d: v / 1e9 for d, v in peaks.items()}}
        print(precision_choice_table({**info, "sizes": {name: sizes[name]}}) + "\n",
              flush=True)
    result = {"benchmark": "precision_choice", **machine(), **info,
              "tensorflow": tf.__version__, "executions": args.executions, "sizes": sizes}
    path = result_path("precision_choice", result, args.output)
    output = write_result(path, merged(path, result))
    print(precision_choice_table(json.loads(path.read_text())))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
