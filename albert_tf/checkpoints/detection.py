"""Which checkpoint format a path holds, read from the files it has (for callers that let a
user name a checkpoint without `--from`).

    ours          a folder with `config.yaml` (albert-pretrain, albert-convert) or
                  `finetune.yaml` (albert-finetune), or one of their `ckpt-N` checkpoints
    original      a folder with `albert_config.json` or `model.ckpt-*`, or such a checkpoint
    huggingface   a folder with `config.json` naming `model_type` and the weights
    keras_hub     a folder with keras-hub's `metadata.json` and `config.json`
Model Garden checkpoints carry nothing that names them: say `model_garden` explicitly.
"""

from __future__ import annotations

import json
import os

import tensorflow as tf

from albert_tf.checkpoints.reading import CheckpointError

_OURS = ("config.yaml", "finetune.yaml")


def detect_format(path: str) -> str:
    """The format of the checkpoint at `path` (see the module docstring).

    Raises:
        CheckpointError: nothing at `path`, or nothing that names a format; the message says
            what was looked for.
    """
    path = os.fspath(path)
    if not tf.io.gfile.isdir(path):
        if not tf.io.gfile.exists(path + ".index"):
            raise CheckpointError(f"{path}: no such folder or checkpoint")
        parent = os.path.basename(os.path.dirname(path.rstrip("/")))
        return "ours" if parent in ("checkpoints", "best") else "original"
    names = set(tf.io.gfile.listdir(path))
    names = {name.rstrip("/") for name in names}
    if names & set(_OURS):
        return "ours"
    if "albert_config.json" in names or any(name.startswith("model.ckpt")
                                            for name in names):
        return "original"
    if "config.json" in names:
        if "metadata.json" in names:
            return "keras_hub"
        with tf.io.gfile.GFile(os.path.join(path, "config.json")) as f:
            try:
                config = json.load(f)
            except ValueError:
                config = {}
        if isinstance(config, dict) and "model_type" in config:
            return "huggingface"
    raise CheckpointError(
        f"{path}: cannot tell the checkpoint format: expected config.yaml or finetune.yaml "
        f"(ours), albert_config.json or model.ckpt-* (original), config.json with model_type "
        f"(huggingface), or metadata.json and config.json (keras_hub); name the format "
        f"(source_format=..., --from) for a Model Garden checkpoint")
