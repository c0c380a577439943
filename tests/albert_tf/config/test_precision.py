"""`precision: auto`'s rule on made-up devices, flag sets and model sizes (no TensorFlow)."""

import pytest

from albert_tf.config import ConfigError
from albert_tf.config.loop import TrainingLoopConfig
from albert_tf.config.precision import (
    CPU_BFLOAT16_MIN_HIDDEN_SIZE,
    Device,
    choose_precision,
)

ZEN4 = Device("CPU", "AMD EPYC", cpu_flags=frozenset({"avx2", "fma", "avx512f", "avx512_bf16",
                                                      "avx512_vnni"}))
SAPPHIRE_RAPIDS = Device("CPU", "Xeon", cpu_flags=frozenset({"avx512f", "amx_tile",
                                                             "amx_bf16", "amx_int8"}))
# AVX-512 with VNNI (int8 dot products) but no bfloat16 unit: Cascade Lake, Ice Lake.
CASCADE_LAKE = Device("CPU", "Xeon", cpu_flags=frozenset({"avx2", "avx512f", "avx512_vnni"}))
AVX2_ONLY = Device("CPU", "EPYC", cpu_flags=frozenset({"avx2", "fma"}))
NO_FLAGS = Device("CPU", "off Linux")


@pytest.mark.parametrize("device, hidden_size, jit_compile, policy", [
    (Device("TPU"), 32, False, "mixed_bfloat16"),  # any size: TPUs compute in bf16
    (Device("TPU"), 4096, True, "mixed_bfloat16"),
    (Device("GPU", compute_capability=(9, 0)), 768, True, "mixed_bfloat16"),
    (Device("GPU", compute_capability=(8, 0)), 32, False, "mixed_bfloat16"),
    (Device("GPU", compute_capability=(7, 5)), 768, True, "mixed_float16"),
    (Device("GPU", compute_capability=(7, 0)), 768, False, "mixed_float16"),
    (Device("GPU", compute_capability=(6, 1)), 768, True, "float32"),
    (Device("GPU"), 768, True, "float32"),  # capability unknown
    (ZEN4, 768, False, "mixed_bfloat16"),  # albert_base
    (ZEN4, 1024, False, "mixed_bfloat16"),  # albert_large
    (ZEN4, 4096, False, "mixed_bfloat16"),  # albert_xxlarge
    (ZEN4, 256, False, "mixed_bfloat16"),  # the small scale's widest (Table 10)
    (ZEN4, 128, False, "mixed_bfloat16"),
    (ZEN4, 127, False, "float32"),
    (ZEN4, 64, False, "float32"),  # the small scale, the quickstart
    (ZEN4, 32, False, "float32"),  # the tiny preset
    (ZEN4, 768, True, "float32"),  # XLA's CPU code gains nothing from bf16
    (SAPPHIRE_RAPIDS, 768, False, "mixed_bfloat16"),
    (SAPPHIRE_RAPIDS, 64, False, "float32"),
    (SAPPHIRE_RAPIDS, 1024, True, "float32"),
    (CASCADE_LAKE, 768, False, "float32"),
    (AVX2_ONLY, 768, False, "float32"),
    (AVX2_ONLY, 4096, False, "float32"),
    (NO_FLAGS, 1024, False, "float32"),
])
def test_auto_picks_what_the_device_runs_fastest(device, hidden_size, jit_compile, policy):
    choice = choose_precision("auto", device, hidden_size, jit_compile)
    assert (choice.setting, choice.policy) == ("auto", policy)
    assert choice.describe() == f"auto -> {policy} ({choice.reason})"


def test_each_reason_says_what_decided():
    def reason(device, hidden_size=768, jit_compile=False):
        return choose_precision("auto", device, hidden_size, jit_compile).reason

    assert reason(ZEN4) == (f"CPU flags avx512_bf16; hidden size 768 >= "
                            f"{CPU_BFLOAT16_MIN_HIDDEN_SIZE}, XLA off")
    assert reason(SAPPHIRE_RAPIDS).startswith("CPU flags amx_bf16;")
    assert f"hidden size 64 < {CPU_BFLOAT16_MIN_HIDDEN_SIZE}" in reason(ZEN4, 64)
    assert "train.jit_compile is true" in reason(ZEN4, jit_compile=True)
    assert "none of the flags avx512_bf16, amx_bf16" in reason(AVX2_ONLY)
    assert reason(Device("GPU", compute_capability=(7, 5))) == (
        "GPU compute capability (7, 5) has float16 units")


@pytest.mark.parametrize("setting", ["float32", "mixed_bfloat16", "mixed_float16"])
def test_a_written_policy_is_taken_as_it_is(setting):
    for device in (AVX2_ONLY, ZEN4, Device("TPU"), Device("GPU", compute_capability=(8, 0))):
        choice = choose_precision(setting, device, 32, True)
        assert (choice.policy, choice.describe()) == (setting, f"{setting} (as set)")


def test_auto_is_the_default_and_other_settings_are_refused():
    assert TrainingLoopConfig().precision == "auto"
    assert TrainingLoopConfig(precision="mixed_float16").precision == "mixed_float16"
    with pytest.raises(ConfigError, match="train.precision.*one of auto, float32, "
                                          "mixed_float16, mixed_bfloat16.*'bfloat16'"):
        TrainingLoopConfig(precision="bfloat16")
