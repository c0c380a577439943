"""The device a strategy computes on, found from made-up CPU flags; what `precision: auto`
resolves to there, as a run records it and as `--print_config` shows it."""

import json
import os

import pytest
import tensorflow as tf
import yaml
from repository import REPOSITORY

from albert_tf.cli.pretrain import main as pretrain_main
from albert_tf.config.finetuning import FinetuneConfig, FinetuneTrainConfig
from albert_tf.config.precision import Device, PrecisionChoice
from albert_tf.config.pretraining import PretrainConfig, TrainConfig
from albert_tf.io import machine
from albert_tf.loop.precision import (
    PRECISION_FILE,
    config_precision_note,
    record_precision,
    run_precision,
    strategy_device,
)


@pytest.fixture
def made_up_cpu(monkeypatch, tmp_path):
    """Sets this machine's /proc/cpuinfo to one that lists `flags`."""
    def with_flags(flags: str) -> None:
        cpuinfo = tmp_path / "cpuinfo"
        cpuinfo.write_text(f"processor\t: 0\nmodel name\t: Made-up CPU\nflags\t\t: {flags}\n")
        monkeypatch.setattr(machine, "CPUINFO", str(cpuinfo))
    return with_flags


@pytest.mark.parametrize("flags, bfloat16_flags", [
    ("fpu avx2 fma avx512f avx512_bf16 avx512_vnni", ["avx512_bf16"]),
    ("fpu avx512f amx_bf16 amx_tile", ["amx_bf16"]),
    ("fpu avx2 fma", []),
])
def test_the_default_strategy_computes_on_this_cpu_with_its_flags(made_up_cpu, flags,
                                                                  bfloat16_flags):
    made_up_cpu(flags)
    device = strategy_device(tf.distribute.get_strategy())
    assert (device.kind, device.name, device.bfloat16_flags()) == (
        "CPU", "Made-up CPU", bfloat16_flags)
    mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    assert strategy_device(mirrored).bfloat16_flags() == bfloat16_flags


@pytest.mark.parametrize("flags, hidden_size, jit_compile, policy", [
    ("avx2 avx512f avx512_bf16", 768, False, "mixed_bfloat16"),
    ("avx2 avx512f avx512_bf16", 64, False, "float32"),
    ("avx2 avx512f avx512_bf16", 768, True, "float32"),
    ("avx2 fma avx512f", 768, False, "float32"),  # nothing changes without the flags
])
def test_a_run_prints_and_records_each_start(made_up_cpu, tmp_path, capsys, flags,
                                             hidden_size, jit_compile, policy):
    made_up_cpu(flags)
    config = PretrainConfig(train=TrainConfig(model_dir=str(tmp_path)))
    strategy = tf.distribute.get_strategy()
    assert run_precision("albert-pretrain", config, strategy, hidden_size, jit_compile,
                         0) == policy
    assert run_precision("albert-pretrain", config, strategy, hidden_size, jit_compile,
                         200, chief=False) == policy  # a worker: prints and writes nothing
    record = json.loads((tmp_path / PRECISION_FILE).read_text())
    assert record["setting"] == "auto" and len(record["starts"]) == 1
    start = record["starts"][0]
    assert capsys.readouterr().out.splitlines() == [
        f"albert-pretrain: precision auto -> {policy} ({start['reason']})"]
    assert (start["start_step"], start["policy"], start["device"], start["device_name"],
            start["jit_compile"]) == (0, policy, "CPU", "Made-up CPU", jit_compile)


def test_a_resumed_start_adds_its_own_entry(tmp_path):
    """A run continued on another machine may resolve to another policy: both are kept."""
    cpu = Device("CPU", "Made-up CPU", cpu_flags=frozenset({"avx512_bf16"}))
    record_precision(str(tmp_path), PrecisionChoice("auto", "mixed_bfloat16", "flags"), cpu,
                     False, 0)
    record_precision(str(tmp_path), PrecisionChoice("auto", "float32", "no flags"),
                     Device("CPU", "Older CPU"), False, 300)
    starts = json.loads((tmp_path / PRECISION_FILE).read_text())["starts"]
    assert [(s["start_step"], s["policy"], s["device_name"]) for s in starts] == [
        (0, "mixed_bfloat16", "Made-up CPU"), (300, "float32", "Older CPU")]


def test_print_config_notes_what_auto_resolves_to_here(made_up_cpu):
    made_up_cpu("avx2 avx512f avx512_bf16")
    pretrain = PretrainConfig()
    assert config_precision_note(pretrain, 768) == (
        "# train.precision on this machine: auto -> mixed_bfloat16 (CPU flags avx512_bf16; "
        "hidden size 768 >= 128, XLA off)")
    assert config_precision_note(pretrain, 64).startswith(
        "# train.precision on this machine: auto -> float32 (CPU flags avx512_bf16, but "
        "hidden size 64 < 128")
    # A fine-tune's model size is known once its checkpoint is read: the rule for both.
    finetune = FinetuneConfig(task="mrpc")
    assert config_precision_note(finetune, None) == (
        "# train.precision on this machine: auto -> mixed_bfloat16 for a model of hidden "
        "size >= 128, float32 for a smaller one (CPU flags avx512_bf16)")
    written = FinetuneConfig(task="mrpc", train=FinetuneTrainConfig(precision="float32"))
    assert config_precision_note(written, None) == "# train.precision: float32 (as set)"
    made_up_cpu("avx2 fma")
    assert config_precision_note(finetune, None).startswith(
        "# train.precision on this machine: auto -> float32 (the CPU has none of the flags")


def test_print_config_keeps_auto_and_says_what_it_resolves_to(made_up_cpu, capsys):
    made_up_cpu("avx2 fma avx512f avx512_bf16")
    recipe = os.path.join(REPOSITORY, "configs", "pretrain", "tiny_cpu.yaml")
    assert pretrain_main(["--config", recipe, "--print_config"]) == 0
    printed = capsys.readouterr().out
    assert yaml.safe_load(printed)["train"]["precision"] == "auto"
    assert printed.splitlines()[-1] == (  # the quickstart's model: float32 on any CPU
        "# train.precision on this machine: auto -> float32 (CPU flags avx512_bf16, but hidden "
        "size 64 < 128: matmuls this small run no faster in bfloat16)")
    assert pretrain_main(["--config", recipe, "--print_config", "--override",
                          "model.hidden_size=768", "--override", "model.num_attention_heads=12",
                          "--override", "train.jit_compile=true"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(
        "# train.precision on this machine: auto -> float32 (CPU flags avx512_bf16, but "
        "train.jit_compile is true")
