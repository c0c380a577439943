"""The device a run computes on, the policy its `train.precision` resolves to there
(`albert_tf.config.precision.choose_precision`), and the record of it in the run folder.

A run's folder keeps what each start of the run resolved, and why, in `precision.json`:

    {"setting": "auto",
     "starts": [{"start_step": 0, "policy": "mixed_bfloat16",
                 "reason": "CPU flags avx512_bf16; hidden size 768 >= 512, XLA off",
                 "device": "CPU", "device_name": "AMD EPYC ...", "jit_compile": false,
                 "host": "vm"}]}

A run resumed on another machine may compute in another policy (its variables, checkpoints
and optimizer state are float32 under every policy), so each start adds an entry; the
settings a same-run check compares hold `auto` as written.
"""

from __future__ import annotations

import json
import os
import socket

from albert_tf.config.precision import (
    CPU_BFLOAT16_MIN_HIDDEN_SIZE,
    Device,
    PrecisionChoice,
    choose_precision,
    device_policy,
)
from albert_tf.io.files import atomic_write_bytes, exists, read_bytes
from albert_tf.io.machine import cpu_flags, cpu_name

PRECISION_FILE = "precision.json"


def cpu_device() -> Device:
    """This machine's CPU, with its feature flags."""
    return Device("CPU", cpu_name(), None, frozenset(cpu_flags()))


def _gpu_device() -> Device:
    import tensorflow as tf

    gpu = tf.config.list_physical_devices("GPU")[0]
    details = tf.config.experimental.get_device_details(gpu)
    capability = details.get("compute_capability")
    return Device("GPU", details.get("device_name", gpu.name),
                  tuple(capability) if capability else None)


def strategy_device(strategy) -> Device:
    """The kind of device `strategy`'s replicas compute on (the default strategy: the first
    GPU if there is one, else the CPU)."""
    import tensorflow as tf

    from albert_tf.loop.distribute import uses_only_cpus

    if isinstance(strategy, tf.distribute.TPUStrategy):
        return Device("TPU", strategy.extended.worker_devices[0])
    if uses_only_cpus(strategy):
        return cpu_device()
    return _gpu_device()


def distribution_device(distribution) -> Device:
    """The device a run of `distribution` (a `DistributionConfig`) would compute on, found
    without building its strategy (which would connect to a TPU): for `--print_config`."""
    if distribution.strategy == "tpu":
        return Device("TPU", distribution.tpu or "local TPU")
    import tensorflow as tf

    devices = [device.upper() for device in distribution.devices]
    on_cpus = (distribution.strategy == "cpu" or (devices and all("CPU" in d for d in devices))
               or not tf.config.list_physical_devices("GPU"))
    return cpu_device() if on_cpus else _gpu_device()


def run_precision(prog: str, config, strategy, hidden_size: int, jit_compile: bool,
                  start_step: int, chief: bool = True) -> str:
    """Resolves `config.train.precision` for `strategy`'s device and a model of `hidden_size`
    whose steps compile with XLA or not (`jit_compile`, as resolved); prints the choice as
    `<prog>: precision ...` and, on the `chief`, records it in the run folder. Returns the
    policy to build the model under."""
    device = strategy_device(strategy)
    choice = choose_precision(config.train.precision, device, hidden_size, jit_compile)
    if chief:
        print(f"{prog}: precision {choice.describe()}")
        record_precision(config.train.model_dir, choice, device, jit_compile, start_step)
    return choice.policy


def record_precision(model_dir: str, choice: PrecisionChoice, device: Device,
                     jit_compile: bool, start_step: int) -> None:
    """Adds this start's choice to `model_dir`/precision.json (written atomically)."""
    path = os.path.join(model_dir, PRECISION_FILE)
    record = json.loads(read_bytes(path)) if exists(path) else {"starts": []}
    record["setting"] = choice.setting
    record["starts"].append({
        "start_step": int(start_step), "policy": choice.policy, "reason": choice.reason,
        "device": device.kind, "device_name": device.name, "jit_compile": bool(jit_compile),
        "host": socket.gethostname()})
    atomic_write_bytes(path, (json.dumps(record, indent=2) + "\n").encode("utf-8"))


def config_precision_note(config, hidden_size: int | None) -> str:
    """What `config.train.precision` resolves to on this machine, as a YAML comment for
    `--print_config` (the rule for every size when `hidden_size` is not known yet)."""
    setting = config.train.precision
    if setting != "auto":
        return f"# train.precision: {setting} (as set)"
    device = distribution_device(config.distribution)
    jit_compile = config.train.jit_compile
    if jit_compile is None:  # as loop.distribute.resolve_jit_compile decides it
        jit_compile = device.kind == "GPU"
    if hidden_size is None:  # a fine-tune's model size is known once its checkpoint is read
        small = choose_precision(setting, device, 1, jit_compile)
        large = choose_precision(setting, device, CPU_BFLOAT16_MIN_HIDDEN_SIZE, jit_compile)
        if small.policy != large.policy:
            return (f"# train.precision on this machine: auto -> {large.policy} for a model "
                    f"of hidden size >= {CPU_BFLOAT16_MIN_HIDDEN_SIZE}, float32 for a "
                    f"smaller one ({device_policy(device)[1]})")
        hidden_size = 1
    choice = choose_precision(setting, device, hidden_size, jit_compile)
    return f"# train.precision on this machine: {choice.describe()}"
