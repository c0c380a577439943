"""A finished fine-tuning run folder as a Keras task model (for export and inference)."""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from albert_tf.checkpoints.reading import CheckpointError
from albert_tf.config import AlbertConfig
from albert_tf.config.finetuning import FinetuneConfig
from albert_tf.config.schema import load_yaml_mapping
from albert_tf.finetuning.dev_evaluation import read_best, restore_weights
from albert_tf.models.encoder import INPUT_NAMES

FINETUNE_CONFIG_FILE = "finetune.yaml"
MODEL_CONFIG_FILE = "model_config.yaml"


def is_finetune_run(path: str) -> bool:
    return os.path.isfile(os.path.join(path, FINETUNE_CONFIG_FILE))


@dataclasses.dataclass
class FinetunedModel:
    """A task model with its best weights, and what serving it needs."""

    model: object
    config: FinetuneConfig
    step: int
    checkpoint: str


def read_finetune_config(model_dir: str) -> FinetuneConfig:
    """The resolved config a run folder keeps (`finetune.yaml`)."""
    from albert_tf.config.schema import dataclass_from_mapping

    config_path = os.path.join(model_dir, FINETUNE_CONFIG_FILE)
    return dataclass_from_mapping(FinetuneConfig, load_yaml_mapping(config_path), config_path)


def load_finetuned(model_dir: str, checkpoint: str | None = None) -> FinetunedModel:
    """The run's task model with the weights of its best dev evaluation (or `checkpoint`)."""
    from albert_tf.finetuning.task_kinds import get_task

    config = read_finetune_config(model_dir)
    model_config = AlbertConfig.from_yaml(os.path.join(model_dir, MODEL_CONFIG_FILE))
    best = read_best(model_dir)
    if checkpoint is None:
        if best is None:
            raise CheckpointError(f"{model_dir}: no best.json; the run has not evaluated yet")
        checkpoint = os.path.join(model_dir, best["checkpoint"])
    task = get_task(config)
    model = task.build_model(model_config)
    shape = (1, 4, 2) if task.kind == "multiple_choice" else (1, 2)
    model({name: np.zeros(shape, np.int32) for name in INPUT_NAMES}, training=False)
    restore_weights(model, checkpoint)
    step = int(os.path.basename(checkpoint).rsplit("-", 1)[-1])
    return FinetunedModel(model, config, step, checkpoint)
