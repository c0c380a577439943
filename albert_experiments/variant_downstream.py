"""The downstream columns of a table: each variant fine-tuned on the scale's tasks, one run per
seed, and the average over tasks that the paper's tables end with.

A variant's `result.json` keeps, per task (by its name in the table):

    "downstream": {"bbc-news": {"task": "classify", "metric": "accuracy",
                                "settings": {...}, "folder": "finetune/bbc-news-<digest>",
                                "seeds": {"1": {"value": 0.87, "best_step": 600}, ...},
                                "value": 0.87}}   # the mean over the seeds

Each seed is kept as it finishes, so an interrupted variant resumes at its next seed. The
fine-tuning runs live in `<variant run>/<folder>/seed<k>`; the folder's name carries a digest
of the task's settings (source, recipe name, overrides, metric), so changed settings fine-tune
anew instead of finding old runs. The digest holds the recipe's name, not its values: a
changed `SMALL_MODEL_RECIPE` must get a new name.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from albert_experiments.spec import DownstreamSpec
from albert_tf.finetuning.starts import SMALL_MODEL_RECIPE, dev_scores, folder_task


def settings_digest(settings: Mapping[str, Any] | Sequence[str]) -> str:
    """Eight hex digits naming settings, a mapping or a list of overrides (a folder per
    settings)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]


def fine_tune_variant(task: DownstreamSpec, task_folder: str, run_dir: str, spm_model: str,
                      seq_length: int, entry: Mapping[str, Any] | None,
                      keep: Callable[[dict[str, Any]], None],
                      start: Sequence[str] | None = None) -> dict[str, Any]:
    """Fine-tunes the pretraining run `run_dir` on `task` (its data in `task_folder`) once per
    seed not yet in `entry` (the task's stored scores), calling `keep` with the updated entry
    after each seed; returns the entry. An entry made with other settings is started anew.

    `start` replaces the start (default: `model.init_checkpoint=<run_dir>`), e.g. a random
    start's `model.config=...` (`albert_tf.finetuning.starts.start_overrides`); the runs
    then still live under `run_dir`."""
    settings = task.settings()
    if not entry or entry.get("settings") != settings:
        finetune_task = task.task or folder_task(task_folder)
        entry = {"task": finetune_task, "metric": task.metric, "settings": settings,
                 "folder": os.path.join("finetune", f"{task.name}-{settings_digest(settings)}"),
                 "seeds": {}}
    entry = {**entry, "seeds": dict(entry["seeds"])}
    recipe = ([*SMALL_MODEL_RECIPE, f"data.max_seq_length={seq_length}"]
              if task.recipe == "small_model" else [])
    for number, seed in enumerate(task.seeds, 1):
        if str(seed) in entry["seeds"]:
            continue
        print(f"albert-experiment: {run_dir}: {task.name}, seed {seed} ({number} of "
              f"{len(task.seeds)})", flush=True)
        scores = dev_scores(entry["task"], [
            *recipe, *task.overrides, *(start or [f"model.init_checkpoint={run_dir}"]),
            f"model.spm_model={spm_model}", f"data.data_dir={task_folder}",
            f"train.seed={seed}",
            f"train.model_dir={os.path.join(run_dir, entry['folder'], f'seed{seed}')}"],
            metric=task.metric or None, label=task.name)
        entry["metric"], entry["split"] = scores["metric"], scores["split"]
        entry["seeds"][str(seed)] = {"value": scores["value"], "best_step": scores["best_step"]}
        entry["value"] = float(np.mean([run["value"] for run in entry["seeds"].values()]))
        keep(entry)
    return entry
