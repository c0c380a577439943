"""Fine-tuning reduced to dev and test scores, from a pretraining run or from a random start
of its sizes: what the downstream suite, the table runner and `albert-pretrain`'s downstream
check are made of (through `albert_lab.comparison.seed_loop`).

    start = start_overrides(run_dir, "pretrained", random_dir, model_config)
    scores = fine_tune_scores("classify", [*start, "data.data_dir=tasks/bbc-news",
                                           "train.model_dir=runs/check/pretrained"])
    scores["metric"], scores["value"], scores["test"]  # "accuracy", 0.87, 0.85

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
from albert_tf.config.finetuning import load_finetune_config, recipe_path
from albert_tf.finetuning.runner import run_finetuning
from albert_tf.finetuning.task_kinds import get_task
from albert_tf.io.files import atomic_write_bytes
from albert_tf.task_data.glue_table import FOLDER_DESCRIPTION

STARTS = ("pretrained", "random")


# The comparison's fine-tunes compute in float32 on every machine, as every committed result
# was made: `auto` would move them to bfloat16 on GPUs and TPUs, and results made on two
# machines would no longer be the same computation (an override may still set another).
FLOAT32 = "train.precision=float32"


def fine_tune_scores(task: str, overrides: Sequence[str], metric: str | None = None,
                     label: str | None = None) -> dict[str, Any]:
    """Fine-tunes `task` (an `albert-finetune` task name) with its recipe and `overrides`
    (which must name `train.model_dir`; a finished run there is found, an interrupted one
    resumed) and returns {"task", "metric", "split", "value", "best_step", "dev", "test",
    "constant", "constant_test"}: `value` is `metric` (default: the task's primary metric)
    on the first dev split, `test` the same checkpoint's on the labelled test split (None
    without one), `constant` and `constant_test` what one answer for every example scores
    on them (None where undefined, or for another metric than the primary one).

    `label` names the run in the ConfigError raised when the metric is missing.
    """
    config = load_finetune_config(recipe_path(task), [FLOAT32, *overrides], task=task)
    tf_keras.backend.clear_session()
    outcome = run_finetuning(config)
    primary = get_task(config).primary_metric
    metric = metric or primary
    split = next(iter(outcome.dev_metrics))
    if metric not in outcome.dev_metrics[split]:
        raise ConfigError(
            f"downstream task {label or task}: no dev metric {metric!r} (the run reports "
            f"{', '.join(outcome.dev_metrics[split])})")
    test = outcome.test_metrics.get("test", {})
    constants = outcome.constant_scores if metric == primary else {}
    return {"task": task, "metric": metric, "split": split,
            "value": float(outcome.dev_metrics[split][metric]), "best_step": outcome.best_step,
            "dev": outcome.dev_metrics, "test": test.get(metric),
            "constant": constants.get(split), "constant_test": constants.get("test")}


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
