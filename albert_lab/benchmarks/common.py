"""What every benchmark records about the machine and its device, the matmul peak MFU is
measured against, and how results are written (atomically)."""

from __future__ import annotations

import json
import pathlib
import time

from albert_tf.io.machine import cpu_flags, cpu_name, machine  # noqa: F401 (machine: for the benchmarks)

# Relative to the working folder, the repository's root (as `albert-experiment` writes
# experiments/results/ there).
RESULTS = pathlib.Path("benchmarks", "results")

# CPU flags (from /proc/cpuinfo) of matrix units that make bfloat16 matmuls faster than
# float32 ones: AVX512-BF16 (Cooper Lake, Zen 4) and AMX (Sapphire Rapids).
CPU_BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16")


def mixed_precision_for(kind: str, compute_capability: tuple[int, int] | None = None,
                        flags: set[str] = frozenset()) -> tuple[str | None, str]:
    """The mixed-precision policy the hardware runs faster than float32, and why (or why none).

    Args:
        kind: "TPU", "GPU" or "CPU".
        compute_capability: a GPU's (major, minor).
        flags: a CPU's feature flags.
    Returns:
        (policy name or None, a sentence saying why).
    """
    if kind == "TPU":
        return "mixed_bfloat16", "TPU matrix units run bfloat16"
    if kind == "GPU":
        if compute_capability and compute_capability >= (8, 0):
            return "mixed_bfloat16", f"GPU compute capability {compute_capability} has bf16"
        if compute_capability and compute_capability >= (7, 0):
            return "mixed_float16", f"GPU compute capability {compute_capability} has fp16"
        return None, f"GPU compute capability {compute_capability} has no tensor cores"
    found = sorted(flags & set(CPU_BFLOAT16_FLAGS))
    if found:
        return "mixed_bfloat16", f"CPU flags {', '.join(found)}"
    return None, (f"CPU has none of the flags {', '.join(CPU_BFLOAT16_FLAGS)}: bfloat16 "
                  "matmuls are emulated and slower than float32")


def device_info(strategy) -> dict:
    """The device kind and name the `strategy` runs on, and the mixed-precision policy for it."""
    import tensorflow as tf

    try:
        devices = [d.upper() for d in strategy.extended.worker_devices]
    except RuntimeError:  # the default strategy: the first GPU if there is one, else the CPU
        devices = []
    gpus = tf.config.list_physical_devices("GPU")
    if any("TPU" in d for d in devices):
        kind, name, capability = "TPU", devices[0], None
    elif gpus and not (devices and all("CPU" in d for d in devices)):
        details = tf.config.experimental.get_device_details(gpus[0])
        kind, name = "GPU", details.get("device_name", gpus[0].name)
        capability = details.get("compute_capability")
    else:
        kind, name, capability = "CPU", cpu_name(), None
    policy, reason = mixed_precision_for(kind, capability, cpu_flags() if kind == "CPU" else set())
    return {"device": kind, "device_name": name, "replicas": strategy.num_replicas_in_sync,
            "mixed_precision": policy, "mixed_precision_reason": reason}


def measure_matmul_peak(size: int = 2048, repeats: int = 10, dtype: str = "float32") -> float:
    """FLOP/s of the best of several matmuls of two size x size matrices of `dtype`, on the
    default device (run it inside a strategy's scope to place it elsewhere)."""
    import tensorflow as tf

    a = tf.cast(tf.random.normal((size, size)), dtype)
    b = tf.cast(tf.random.normal((size, size)), dtype)
    matmul = tf.function(lambda x, y: tf.matmul(x, y))
    matmul(a, b).numpy()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        matmul(a, b).numpy()
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 / best


def write_result(result: dict, name: str, output: str | None = None) -> pathlib.Path:
    """Writes `result` to `output` or results/<name>-<host>.json; returns the path."""
    path = pathlib.Path(output or RESULTS / f"{name}-{result['host']}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(result, indent=2) + "\n")
    temporary.replace(path)
    return path


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
