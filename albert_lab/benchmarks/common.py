"""What every benchmark records about the machine and its device, the matmul peak MFU is
measured against, and where its result file goes (`albert_lab.result_files` writes it)."""

from __future__ import annotations

import pathlib
import time

from albert_tf.config.precision import device_policy
from albert_tf.io.machine import machine  # noqa: F401 (for the benchmarks)

# Relative to the working folder, the repository's root (as `albert-experiment` writes
# experiments/results/ there).
RESULTS = pathlib.Path("benchmarks", "results")


def device_info(strategy) -> dict:
    """The device kind and name the `strategy` runs on, its bfloat16 CPU flags, and the
    mixed-precision policy it runs large matmuls fastest in (None: float32), with why
    (`albert_tf.config.precision.device_policy`, the device half of `precision: auto`)."""
    from albert_tf.loop.precision import strategy_device

    device = strategy_device(strategy)
    policy, reason = device_policy(device)
    return {"device": device.kind, "device_name": device.name,
            "replicas": strategy.num_replicas_in_sync,
            "cpu_bfloat16_flags": device.bfloat16_flags(),
            "mixed_precision": None if policy == "float32" else policy,
            "mixed_precision_reason": reason}


def matmul_rate(rows: int, inner: int, columns: int, dtype: str = "float32",
                repeats: int = 10) -> float:
    """FLOP/s of the fastest of `repeats` (rows x inner) @ (inner x columns) matmuls of
    `dtype`, on the default device (run it inside a strategy's scope to place it elsewhere)."""
    import tensorflow as tf

    left = tf.cast(tf.random.normal((rows, inner)), dtype)
    right = tf.cast(tf.random.normal((inner, columns)), dtype)
    matmul = tf.function(lambda a, b: tf.matmul(a, b))
    matmul(left, right).numpy()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        matmul(left, right).numpy()
        best = min(best, time.perf_counter() - start)
    return 2 * rows * inner * columns / best


def measure_matmul_peak(size: int = 2048, repeats: int = 10, dtype: str = "float32") -> float:
    """FLOP/s of the best of several matmuls of two size x size matrices of `dtype`."""
    return matmul_rate(size, size, size, dtype, repeats)


def result_path(name: str, result: dict, output: str | None = None) -> pathlib.Path:
    """Where a benchmark's `result` goes: `output` when given, else
    results/<name>-<host>.json (`albert_lab.result_files.write_result` writes it)."""
    return pathlib.Path(output or RESULTS / f"{name}-{result['host']}.json")


def device_peak_memory_gib() -> float | None:
    """Peak memory allocated on the first GPU or TPU so far, or None on a CPU-only run (where
    the process's peak RSS is the figure)."""
    import tensorflow as tf

    for kind in ("GPU", "TPU"):
        if tf.config.list_logical_devices(kind):
            try:
                return tf.config.experimental.get_memory_info(f"{kind}:0")["peak"] / 2 ** 30
            except (ValueError, KeyError, tf.errors.InvalidArgumentError):
                return None
    return None
