"""One start fine-tuned on one task once per seed: the loop that the downstream suite
(`albert-experiment downstream`), the table runner and `albert-pretrain`'s downstream check
share.

    seeds = fine_tune_seeds("classify", [*SMALL_MODEL_RECIPE, "model.init_checkpoint=runs/a",
                                         "data.data_dir=tasks/bbc-news"],
                            seeds=(1, 2, 3, 4, 5), folder="runs/a/downstream/bbc-news")
    seeds["1"]  # {"metric": "accuracy", "value": 0.87, "test": 0.85, "best_step": 600,
                #  "constant": 0.239, "constant_test": 0.236, "stuck": False}

Each seed's run lives in `<folder>/seed<k>` and its record is handed to `keep` as soon as it
finishes, so an interrupted loop resumes at its next seed. The fine-tunes run in a child
process (`fine_tune_in_child`), a new one every `RUNS_PER_PROCESS` runs: TensorFlow keeps
some memory of every model and compiled step a process has built, and a suite of forty
fine-tunes in one process ran out of memory; a process per run would pay TensorFlow's
import (about 4 s on two cores) for each 50-second fine-tune of a small model. A run gives
the same weights whichever process it runs in (docs/finetuning.md, "Reproducible").
`value` is the dev score that chose the checkpoint, `test` the same checkpoint's score on
the labelled test split (None when the task has none), `constant` and `constant_test` what
one answer for every example scores there, and `stuck` whether the dev score is within a
point of it (`albert_tf.finetuning.stuck`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterator, Mapping, Sequence

from albert_tf.comparison.starts import fine_tune_scores
from albert_tf.finetuning.stuck import is_stuck

DEFAULT_SEEDS = (1, 2, 3, 4, 5)
RUNS_PER_PROCESS = 5  # one seed loop's runs; forty in one process ran out of memory


@contextlib.contextmanager
def child_process(runs_per_process: int = RUNS_PER_PROCESS) -> Iterator[ProcessPoolExecutor]:
    """One worker process, replaced after `runs_per_process` runs and ended on exit; started
    by the first run, so a loop with nothing left to run starts none. Spawned, not forked: a
    fork would copy this process's TensorFlow threads and their locks mid-use."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                             max_tasks_per_child=runs_per_process) as pool:
        yield pool


def fine_tune_in_child(task: str, overrides: Sequence[str], metric: str | None = None,
                       label: str | None = None,
                       pool: ProcessPoolExecutor | None = None) -> dict[str, Any]:
    """`fine_tune_scores` in the worker of `pool` (`child_process`; None: a process of its
    own that ends with the run), so nothing it built stays in this one; its errors are
    raised here."""
    if pool is None:
        with child_process(1) as own:
            return fine_tune_in_child(task, overrides, metric, label, own)
    return pool.submit(fine_tune_scores, task, list(overrides), metric, label).result()


def seed_record(scores: Mapping[str, Any]) -> dict[str, Any]:
    """What a seed loop keeps of one run's `fine_tune_scores`."""
    return {"metric": scores["metric"], "value": scores["value"], "test": scores["test"],
            "best_step": scores["best_step"], "constant": scores["constant"],
            "constant_test": scores["constant_test"],
            "stuck": is_stuck(scores["value"], scores["constant"])}


def fine_tune_seeds(task: str, overrides: Sequence[str], seeds: Sequence[int], folder: str,
                    done: Mapping[str, Any] | None = None,
                    keep: Callable[[dict[str, Any]], None] | None = None,
                    metric: str | None = None, label: str | None = None) -> dict[str, Any]:
    """Fine-tunes `task` with `overrides` once per seed of `seeds` not in `done` (seed ->
    record, as strings), in `<folder>/seed<k>`; calls `keep` with all records so far after
    each seed and returns them (`seed_record`). `metric` and `label` go to
    `fine_tune_scores`, which runs in a child process (`fine_tune_in_child`)."""
    records = dict(done or {})
    with child_process() as pool:
        for number, seed in enumerate(seeds, 1):
            if str(seed) in records:
                continue
            print(f"fine-tuning {label or task} in {folder}: seed {seed} ({number} of "
                  f"{len(seeds)})", flush=True)
            scores = fine_tune_in_child(
                task, [*overrides, f"train.seed={seed}",
                       f"train.model_dir={os.path.join(folder, f'seed{seed}')}"],
                metric=metric, label=label, pool=pool)
            records[str(seed)] = seed_record(scores)
            if keep is not None:
                keep(dict(records))
    return records
