"""Fine-tuning reduced to dev scores, from a pretraining run or from a random start of its
sizes: what the downstream suite, the table runner and `albert-pretrain`'s downstream check
are made of.

    start = start_overrides(run_dir, "pretrained", random_dir, model_config)
    scores = dev_scores("classify", [*start, "data.data_dir=tasks/bbc-news",
                                     "train.model_dir=runs/check/pretrained"])
    scores["metric"], scores["value"]  # "accuracy", 0.87

A random start gets the run's model config (written once to `random_dir`), so it differs
from the pretrained start in the initial weights alone.
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

import tf_keras
import yaml

from albert_tf.config import ConfigError
from albert_tf.downstream.glue_tasks import FOLDER_DESCRIPTION
from albert_tf.finetuning.config import load_finetune_config, recipe_path
from albert_tf.finetuning.runner import run_finetuning
from albert_tf.finetuning.tasks import get_task
from albert_tf.text.files import atomic_write_bytes

STARTS = ("pretrained", "random")
# The one recipe every task and start gets in the downstream suite and check: short, for
# models of a few hundred thousand parameters on a few thousand examples. Finished runs are
# found again by the recipe's name (`albert-experiment` keeps fine-tunes per table under a
# digest of the name, not of these values), so a changed recipe needs a new name.
SMALL_MODEL_RECIPE = ("optimizer.learning_rate=5e-4", "optimizer.warmup_steps=60",
                      "train.global_batch_size=32", "train.train_steps=600",
                      "train.eval_every_steps=200", "train.verbose=0",
                      "model.classifier_dropout=0.1")


def dev_scores(task: str, overrides: Sequence[str], metric: str | None = None,
               label: str | None = None) -> dict[str, Any]:
    """Fine-tunes `task` (an `albert-finetune` task name) with its recipe and `overrides`
    (which must name `train.model_dir`; a finished run there is found, an interrupted one
    resumed) and returns {"task", "metric", "split", "value", "best_step", "dev"}: `value` is
    `metric` (default: the task's primary metric) on the first dev split.

    `label` names the run in the ConfigError raised when the metric is missing.
    """
    config = load_finetune_config(recipe_path(task), list(overrides), task=task)
    tf_keras.backend.clear_session()
    outcome = run_finetuning(config)
    metric = metric or get_task(config).primary_metric
    split = next(iter(outcome.dev_metrics))
    if metric not in outcome.dev_metrics[split]:
        raise ConfigError(
            f"downstream task {label or task}: no dev metric {metric!r} (the run reports "
            f"{', '.join(outcome.dev_metrics[split])})")
    return {"task": task, "metric": metric, "split": split,
            "value": float(outcome.dev_metrics[split][metric]), "best_step": outcome.best_step,
            "dev": outcome.dev_metrics}


def start_overrides(run_dir: str, start: str, random_dir: str, model_config: dict) -> list[str]:
    """The fine-tuning overrides of one start: the pretraining run `run_dir` itself, or
    ("random") a fresh model of `model_config`'s sizes, written to
    `<random_dir>/model_config.yaml`."""
    if start == "pretrained":
        return [f"model.init_checkpoint={run_dir}"]
    if start != "random":
        raise ValueError(f"start must be one of {STARTS}, got {start!r}")
    os.makedirs(random_dir, exist_ok=True)
    path = os.path.join(random_dir, "model_config.yaml")
    atomic_write_bytes(path, yaml.safe_dump(model_config).encode())
    return [f"model.config={path}"]


def folder_task(task_folder: str) -> str:
    """The `albert-finetune` task that reads `task_folder` (from the `source.json` that
    `albert-data task` wrote there)."""
    description = os.path.join(task_folder, FOLDER_DESCRIPTION)
    try:
        with open(description, encoding="utf-8") as f:
            return json.load(f)["albert_finetune"]["task"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConfigError(f"{description}: not a task folder's description (albert-data task "
                          f"writes one; {type(error).__name__}: {error})") from None
