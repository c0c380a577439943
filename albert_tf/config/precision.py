"""Precision: the tf_keras mixed-precision policies, the `auto` setting's rule, and the block
that builds models under a policy (tf_keras is imported on use: run configs read
`PRECISION_SETTINGS` and the rule without loading TensorFlow).

`auto` (the default of `train.precision`) picks, from facts about the device and the model:

    TPU                                   mixed_bfloat16   (its matrix units run bfloat16)
    GPU, compute capability >= 8.0        mixed_bfloat16   (Ampere and newer)
    GPU, compute capability 7.x           mixed_float16    (Volta, Turing: fp16 tensor cores)
    older GPU                             float32
    CPU with avx512_bf16 or amx_bf16,     mixed_bfloat16   (oneDNN's bfloat16 matmuls run at
      hidden size >= 128, XLA off                           about twice the float32 rate)
    any other CPU run                     float32

Measured on 2 cores with avx512_bf16 (docs/performance.md, "Float32 against bfloat16"),
a pretraining step in bfloat16 against float32, without XLA: 1.7x as fast at albert_base,
1.5x at hidden size 256, 1.3x at 128; 1.1x at 64 (within the machine's drift from minute to
minute, not worth changing a run's numerics) and slower at the tiny preset's 32, where the
casts cost more than the matmuls gain. XLA's CPU code runs bfloat16 no faster than float32
at any size, so an explicit `train.jit_compile: true` wins over `auto`, which then keeps
float32.

    choose_precision("auto", Device("CPU", cpu_flags=frozenset({"avx512_bf16"})),
                     hidden_size=768, jit_compile=False).policy   # 'mixed_bfloat16'
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Iterator

PRECISION_POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")
PRECISION_SETTINGS = ("auto", *PRECISION_POLICIES)

# CPU flags (/proc/cpuinfo) of units that run bfloat16 matmuls faster than float32 ones:
# AVX512-BF16 (Intel Cooper Lake, AMD Zen 4 and later) and AMX (Intel Sapphire Rapids and
# later). Without them TensorFlow emulates bfloat16 and is slower than in float32.
CPU_BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16")
# The smallest hidden size whose steps `auto` runs in bfloat16 on such a CPU.
CPU_BFLOAT16_MIN_HIDDEN_SIZE = 128


@dataclasses.dataclass(frozen=True)
class Device:
    """What the precision rule needs to know about the device a run computes on.

    Attributes:
        kind: "CPU", "GPU" or "TPU".
        name: for the record (a CPU's model name, a GPU's device name).
        compute_capability: a GPU's (major, minor); None otherwise.
        cpu_flags: a CPU's feature flags (only those of `CPU_BFLOAT16_FLAGS` matter).
    """

    kind: str
    name: str = ""
    compute_capability: tuple[int, int] | None = None
    cpu_flags: frozenset[str] = frozenset()

    def bfloat16_flags(self) -> list[str]:
        return sorted(self.cpu_flags & set(CPU_BFLOAT16_FLAGS))


@dataclasses.dataclass(frozen=True)
class PrecisionChoice:
    """The policy a run computes in, from its `train.precision` setting, and why."""

    setting: str
    policy: str
    reason: str

    def describe(self) -> str:
        """One line for a log: `auto -> mixed_bfloat16 (CPU flags avx512_bf16; ...)`."""
        if self.setting == self.policy:
            return f"{self.policy} (as set)"
        return f"{self.setting} -> {self.policy} ({self.reason})"


def device_policy(device: Device) -> tuple[str, str]:
    """The mixed-precision policy `device` runs faster than float32 for large matmuls (or
    float32 when it has none), and why: the device half of the rule."""
    if device.kind == "TPU":
        return "mixed_bfloat16", "TPU matrix units run bfloat16"
    if device.kind == "GPU":
        capability = device.compute_capability
        if capability and tuple(capability) >= (8, 0):
            return "mixed_bfloat16", f"GPU compute capability {capability} has bfloat16"
        if capability and tuple(capability) >= (7, 0):
            return "mixed_float16", f"GPU compute capability {capability} has float16 units"
        return "float32", f"GPU compute capability {capability} has no tensor cores"
    found = device.bfloat16_flags()
    if found:
        return "mixed_bfloat16", f"CPU flags {', '.join(found)}"
    return "float32", (f"the CPU has none of the flags {', '.join(CPU_BFLOAT16_FLAGS)}: "
                       f"bfloat16 matmuls are emulated there, slower than float32")


def choose_precision(setting: str, device: Device, hidden_size: int,
                     jit_compile: bool) -> PrecisionChoice:
    """The policy a run with `train.precision: setting` computes in (see the module
    docstring); a setting other than `auto` is taken as it is.

    Args:
        setting: one of `PRECISION_SETTINGS`.
        device: where the run computes.
        hidden_size: the model's H (its matmuls are H x H and H x 4H per token).
        jit_compile: whether the run's steps compile with XLA (as resolved for the device).
    """
    if setting != "auto":
        return PrecisionChoice(setting, setting, "set in train.precision")
    policy, reason = device_policy(device)
    if device.kind != "CPU" or policy == "float32":
        return PrecisionChoice(setting, policy, reason)
    if jit_compile:
        return PrecisionChoice(setting, "float32", (
            f"{reason}, but train.jit_compile is true and XLA's CPU code runs bfloat16 no "
            f"faster than float32; leave jit_compile null for bfloat16 without XLA"))
    if hidden_size < CPU_BFLOAT16_MIN_HIDDEN_SIZE:
        return PrecisionChoice(setting, "float32", (
            f"{reason}, but hidden size {hidden_size} < {CPU_BFLOAT16_MIN_HIDDEN_SIZE}: "
            f"matmuls this small run no faster in bfloat16"))
    return PrecisionChoice(setting, policy, (
        f"{reason}; hidden size {hidden_size} >= {CPU_BFLOAT16_MIN_HIDDEN_SIZE}, XLA off"))


@contextlib.contextmanager
def precision_policy(name: str) -> Iterator[None]:
    """Builds layers under the global policy `name` (one of `PRECISION_POLICIES`) inside the
    block, and puts the previous policy back after it, error or not."""
    import tf_keras

    previous = tf_keras.mixed_precision.global_policy()
    tf_keras.mixed_precision.set_global_policy(name)
    try:
        yield
    finally:
        tf_keras.mixed_precision.set_global_policy(previous)
