"""The layout of a pretraining run folder: what `albert-pretrain` writes and what the
checkpoint loaders, converters and exporters read (this module is all they share).

    <model_dir>/config.yaml               the resolved run configuration
    <model_dir>/<name>.model              the SentencePiece model (see `tokenizer` in it)
    <model_dir>/checkpoints/ckpt-<step>   model (+ optimizer) after <step> updates
    <model_dir>/backup/                   Keras BackupAndRestore state of a running run
    <model_dir>/tensorboard/              training and validation logs
    <model_dir>/conversion.json           converted folders only: where the weights came from
"""

from __future__ import annotations

import os
import re

CONFIG_FILE = "config.yaml"
CONVERSION_FILE = "conversion.json"
CHECKPOINT_PREFIX = "ckpt"
SUBFOLDERS = ("checkpoints", "backup", "tensorboard")


def run_folders(model_dir: str) -> dict[str, str]:
    """{"checkpoints": ..., "backup": ..., "tensorboard": ...} of `model_dir`."""
    return {name: os.path.join(model_dir, name) for name in SUBFOLDERS}


def checkpoint_name(step: int) -> str:
    """The checkpoint prefix of step `step` inside `checkpoints/`."""
    return f"{CHECKPOINT_PREFIX}-{int(step)}"


def checkpoint_step(path: str) -> int:
    """The step a `.../ckpt-N` checkpoint was saved at."""
    match = re.search(rf"{CHECKPOINT_PREFIX}-(\d+)$", path)
    if not match:
        raise ValueError(f"{path}: not a checkpoint written by albert-pretrain (ckpt-<step>)")
    return int(match.group(1))
