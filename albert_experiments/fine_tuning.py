"""One fine-tuning run of an experiment, reduced to its dev scores.

Both the table runner (a variant's downstream columns) and `albert-experiment downstream`
(pretrained vs random start) fine-tune through `dev_scores`: the task's recipe with the
caller's overrides, a fresh Keras session, `run_finetuning`, and the primary dev metric.
"""

from __future__ import annotations

from typing import Any, Sequence

import tf_keras

from albert_experiments.spec import ExperimentError
from albert_tf.finetuning.config import load_finetune_config, recipe_path
from albert_tf.finetuning.runner import run_finetuning
from albert_tf.finetuning.tasks import get_task


def dev_scores(task: str, overrides: Sequence[str], metric: str | None = None,
               label: str | None = None) -> dict[str, Any]:
    """Fine-tunes `task` (an `albert-finetune` task name) with its recipe and `overrides`
    (which must name `train.model_dir`; a finished run there is found, an interrupted one
    resumed) and returns {"task", "metric", "split", "value", "best_step", "dev"}: `value` is
    `metric` (default: the task's primary metric) on the first dev split.

    `label` names the run in the error raised when the metric is missing.
    """
    config = load_finetune_config(recipe_path(task), list(overrides), task=task)
    tf_keras.backend.clear_session()
    outcome = run_finetuning(config)
    metric = metric or get_task(config).primary_metric
    split = next(iter(outcome.dev_metrics))
    if metric not in outcome.dev_metrics[split]:
        raise ExperimentError(
            f"downstream task {label or task}: no dev metric {metric!r} (the run reports "
            f"{', '.join(outcome.dev_metrics[split])})")
    return {"task": task, "metric": metric, "split": split,
            "value": float(outcome.dev_metrics[split][metric]), "best_step": outcome.best_step,
            "dev": outcome.dev_metrics}
