"""`configs/pretrain/small_cpu.yaml` is the run the recipe study measured: the study's
command for its candidate (tiny_cpu.yaml with the study's overrides) resolves to the same
config, field for field."""

import os

from repository import REPOSITORY

from albert_lab.studies import recipe_study
from albert_tf.config.pretraining import load_pretrain_config


def _overrides(command):
    return [command[index + 1] for index, part in enumerate(command) if part == "--override"]


def test_small_cpu_is_the_study_candidate_it_was_measured_as(monkeypatch):
    monkeypatch.chdir(REPOSITORY)  # both name their files relative to the repository
    command = recipe_study.pretrain_command("lr_2e-3_dynamic_x4", "runs/small_cpu")
    measured = load_pretrain_config(command[command.index("--config") + 1],
                                    _overrides(command))
    shipped = load_pretrain_config(os.path.join("configs", "pretrain", "small_cpu.yaml"))
    assert shipped == measured
