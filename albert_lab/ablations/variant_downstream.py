"""The downstream columns of a table: each variant fine-tuned on the scale's tasks, one run per
seed, and the average over tasks that the paper's tables end with.

A variant's `result.json` keeps, per task (by its name in the table):

    "downstream": {"bbc-news": {"task": "classify", "metric": "accuracy",
                                "settings": {...}, "folder": "finetune/bbc-news-<digest>",
                                "seeds": {"1": {"value": 0.87, "test": 0.85, "stuck": False,
                                                ...}, ...},   # seed_loop.seed_record
                                "value": 0.87, "test": 0.85,  # the means over the seeds
                                "stuck": 0}}                  # stuck seeds

Each seed is kept as it finishes, so an interrupted variant resumes at its next seed. The
fine-tuning runs live in `<variant run>/<folder>/seed<k>`; the folder's name carries a digest
of the task's settings (source, recipe name, overrides, metric), so changed settings fine-tune
anew instead of finding old runs. The digest holds the recipe's name, not its values: a
changed small-model recipe gets a new name (`albert_lab.comparison.recipes.SMALL_MODEL_RECIPES`).
Entries made before test scores and stuck flags were kept lack them.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from albert_lab.ablations.table_spec import DownstreamSpec
from albert_lab.comparison.recipes import SMALL_MODEL_RECIPES
from albert_lab.comparison.seed_loop import SeedLoop
from albert_lab.comparison.starts import folder_task
from albert_lab.comparison.suite import settings_digest


def task_done(task: DownstreamSpec, entry: Mapping[str, Any] | None) -> bool:
    """Whether `entry` (a task's stored scores) holds every seed of `task` with its current
    settings: then its `variant_seed_loop` has nothing to run."""
    return bool(entry) and entry.get("settings") == task.settings() and all(
        str(seed) in entry["seeds"] for seed in task.seeds)


def variant_seed_loop(task: DownstreamSpec, task_folder: str, run_dir: str, spm_model: str,
                      seq_length: int, entry: Mapping[str, Any] | None,
                      keep: Callable[[dict[str, Any]], None],
                      start: Sequence[str] | None = None) -> SeedLoop:
    """The seed loop (`albert_lab.comparison.seed_loop`) that fine-tunes the pretraining run
    `run_dir` on `task` (its data in `task_folder`) once per seed not yet in `entry` (the
    task's stored scores), calling `keep` with the updated entry after each seed. An entry
    made with other settings is started anew.

    `start` replaces the start (default: `model.init_checkpoint=<run_dir>`), e.g. a random
    start's `model.config=...` (`albert_lab.comparison.starts.start_overrides`); the runs
    then still live under `run_dir`."""
    settings = task.settings()
    if not entry or entry.get("settings") != settings:
        finetune_task = task.task or folder_task(task_folder)
        entry = {"task": finetune_task, "metric": task.metric, "settings": settings,
                 "folder": os.path.join("finetune", f"{task.name}-{settings_digest(settings)}"),
                 "seeds": {}}
    entry = {**entry, "seeds": dict(entry["seeds"])}
    recipe = ([*SMALL_MODEL_RECIPES[task.recipe], f"data.max_seq_length={seq_length}"]
              if task.recipe in SMALL_MODEL_RECIPES else [])

    def keep_seeds(records):
        entry["seeds"] = records
        first = next(iter(records.values()))
        entry["metric"] = first["metric"]
        entry["value"] = float(np.mean([run["value"] for run in records.values()]))
        tests = [run.get("test") for run in records.values()]
        entry["test"] = float(np.mean(tests)) if None not in tests else None
        entry["stuck"] = sum(bool(run.get("stuck")) for run in records.values())
        keep(dict(entry))

    return SeedLoop(entry["task"], [
        *recipe, *task.overrides, *(start or [f"model.init_checkpoint={run_dir}"]),
        f"model.spm_model={spm_model}", f"data.data_dir={task_folder}"], task.seeds,
        os.path.join(run_dir, entry["folder"]), entry["seeds"], keep_seeds,
        metric=task.metric or None, label=task.name)
