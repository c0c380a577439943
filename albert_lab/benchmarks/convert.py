"""Checkpoint conversion time and peak memory at the released sizes.

For each preset, an original-layout TF1 checkpoint of random float32 weights (MLM and SOP
heads included) is written, then timed: reading it into our model (`load_original`), writing
our model folder, writing transformers safetensors, and reading those back. Peak RSS is the
process's high-water mark after each preset (so it only grows). Prints a table and writes JSON:

    python -m albert_lab.benchmarks.convert --presets albert_base albert_xxlarge
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

import numpy as np

from albert_lab.benchmarks.common import machine, result_path
from albert_lab.result_files import write_result
from albert_tf.checkpoints.huggingface import load_huggingface, save_huggingface
from albert_tf.checkpoints.model_folder import load_pretrainer, save_model_folder
from albert_tf.checkpoints.original import (
    build_model,
    load_original,
    original_arrays,
    write_name_based_checkpoint,
)
from albert_tf.checkpoints.original_config import to_original_config
from albert_tf.config.presets import load_preset


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(results: dict, name: str, function, *args, **kwargs):
    start = time.perf_counter()
    value = function(*args, **kwargs)
    results[f"{name}_s"] = round(time.perf_counter() - start, 2)
    return value


def _original_folder(config, folder: str) -> None:
    """An original checkpoint folder with random weights of `config`'s shapes."""
    import json

    rng = np.random.default_rng(0)
    shapes = {name: value.shape for name, value in
              original_arrays(build_model(config, True, "sop")).items()}
    arrays = {name: rng.standard_normal(shape, dtype=np.float32) * 0.02
              for name, shape in shapes.items()}
    os.makedirs(folder)
    write_name_based_checkpoint(os.path.join(folder, "model.ckpt-best"), arrays)
    with open(os.path.join(folder, "albert_config.json"), "w") as f:
        json.dump(to_original_config(config), f)


def measure(preset: str, scratch: str) -> dict:
    config = load_preset(preset)
    results = {"preset": preset}
    source = os.path.join(scratch, preset, "original")
    _original_folder(config, source)
    model, _, _ = _timed(results, "read_original", load_original, source)
    results["parameters"] = sum(int(v.shape.num_elements()) for v in model.trainable_weights)
    ours = os.path.join(scratch, preset, "ours")
    _timed(results, "write_ours", save_model_folder, model, ours)
    hf = os.path.join(scratch, preset, "hf")
    _timed(results, "write_huggingface", save_huggingface, model, hf)
    _timed(results, "read_ours", load_pretrainer, ours)
    _timed(results, "read_huggingface", load_huggingface, hf)
    results["peak_rss_mb"] = round(_peak_rss_mb())
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["albert_base", "albert_xxlarge"])
    parser.add_argument("--output", help="JSON path (default: results/convert-<host>.json)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for preset in args.presets:
            rows.append(measure(preset, scratch))
            print(rows[-1], flush=True)
    columns = ["preset", "parameters", "read_original_s", "write_ours_s", "write_huggingface_s",
               "read_ours_s", "read_huggingface_s", "peak_rss_mb"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(f"{row[c]:,}" if isinstance(row[c], int) else str(row[c])
                                for c in columns) + " |")
    result = {**machine(), "results": rows}
    path = write_result(result_path("convert", result, args.output), result)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
