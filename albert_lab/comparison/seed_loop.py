"""One start fine-tuned on one task once per seed: the loop that the downstream suite
(`albert-experiment downstream`), the table runner and `albert-pretrain`'s downstream check
share.

    seeds = fine_tune_seeds("classify", [*SMALL_MODEL_RECIPE, "model.init_checkpoint=runs/a",
                                         "data.data_dir=tasks/bbc-news"],
                            seeds=(1, 2, 3, 4, 5), folder="runs/a/downstream/bbc-news")
    seeds["1"]  # {"metric": "accuracy", "value": 0.87, "test": 0.85, "best_step": 600,
                #  "constant": 0.239, "constant_test": 0.236, "stuck": False}

    loops = [SeedLoop("classify", [...], (1, 2, 3, 4, 5), "runs/a/downstream/bbc-news"),
             SeedLoop("classify", [...], (1, 2, 3, 4, 5), "runs/random/bbc-news")]
    run_seed_loops(loops)  # every missing seed of both, two at a time on a CPU machine
    loops[1].records, loops[1].error

Each seed's run lives in `<folder>/seed<k>` and its record is handed to the loop's `keep` as
soon as it finishes, so an interrupted loop resumes at its missing seeds. `value` is the dev
score that chose the checkpoint, `test` the same checkpoint's score on the labelled test
split (None when the task has none), `constant` and `constant_test` what one answer for
every example scores there, and `stuck` whether the dev score is within a point of it
(`albert_tf.finetuning.stuck`).

The fine-tunes run in child processes (`WorkerProcess`), each replaced after
`RUNS_PER_PROCESS` runs: TensorFlow keeps some memory of every model and compiled step a
process has built, and a suite of forty fine-tunes in one process ran out of memory; a
process per run would pay TensorFlow's import (about 4 s on two cores) for each fine-tune
of a minute. `run_seed_loops` runs the seeds of all the loops it is given side by side in
`fine_tune_workers()` worker processes, each with its share of the cores: a small model's
fine-tune keeps one core busy with Python and op dispatch as much as with its matmuls, so on
the 2-core machine two workers of one thread each did four fine-tunes of H 64 x 4 in 99 s
where one worker with both threads took 187 s (`albert_lab/benchmarks/fine_tune_workers.py`;
docs/performance.md, "Fine-tunes side by side"). A run gives the same weights in any
process with the same number of threads; with another number its matmuls add in another
order (weights apart by 3e-7 after 200 steps, the same scores: docs/finetuning.md).
"""

from __future__ import annotations

import collections
import dataclasses
import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Callable, Mapping, Sequence

from albert_lab.comparison.starts import fine_tune_scores
from albert_tf.config import ConfigError
from albert_tf.finetuning.stuck import is_stuck
from albert_tf.io.machine import usable_cpus

DEFAULT_SEEDS = (1, 2, 3, 4, 5)
RUNS_PER_PROCESS = 5  # forty fine-tunes in one process ran out of memory
WORKERS_VARIABLE = "ALBERT_FINE_TUNE_WORKERS"


def fine_tune_workers() -> int:
    """How many fine-tunes `run_seed_loops` runs at once: `ALBERT_FINE_TUNE_WORKERS` when
    set; else one on a machine with a GPU (each TensorFlow process takes the whole GPU's
    memory) or a single core, and two otherwise (measured on 2 cores, above)."""
    setting = os.environ.get(WORKERS_VARIABLE, "").strip()
    if setting:
        if not setting.isdigit() or int(setting) < 1:
            raise ConfigError(f"{WORKERS_VARIABLE}={setting!r}: expected a whole number of "
                              f"fine-tunes to run at once, 1 or more")
        return int(setting)
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU"):
        return 1
    return min(2, usable_cpus())


def threads_per_worker(workers: int) -> int | None:
    """Each worker's intra- and inter-op threads when `workers` share the usable cores;
    None for a single worker, which keeps TensorFlow's own counts."""
    return None if workers == 1 else max(1, usable_cpus() // workers)


def raise_first_error(loops: Sequence["SeedLoop"]) -> None:
    """Raises the error of the first loop in `loops` that has one (after `run_seed_loops`)."""
    for loop in loops:
        if loop.error is not None:
            raise loop.error


def _share_the_cores(threads: int) -> None:
    """A worker's start when several share the machine: `threads` intra-op and inter-op
    threads, set before the process runs its first TensorFlow op."""
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)


class WorkerProcess:
    """One spawned worker process that runs one fine-tune at a time, replaced by a fresh one
    after `runs_per_process` runs; started by its first run and ended by `close`. `threads`:
    its intra-op and inter-op threads (None: TensorFlow's own counts). Spawned, not forked: a
    fork would copy this process's TensorFlow threads and their locks mid-use.

    Each worker is a one-process pool that is replaced whole, rather than one pool of
    `workers` processes with `max_tasks_per_child`: on Python 3.11 that pool stops replacing
    workers that reach their limit while runs are queued, and hangs (CPython gh-115634; the
    downstream suite hung there after its tenth fine-tune)."""

    def __init__(self, threads: int | None = None,
                 runs_per_process: int = RUNS_PER_PROCESS):
        self.threads, self.runs_per_process = threads, runs_per_process
        self.pool: ProcessPoolExecutor | None = None
        self.runs = 0

    def submit(self, function: Callable[..., Any], *args: Any) -> Future:
        if self.pool is None or self.runs == self.runs_per_process:
            self.close()
            share = ({} if self.threads is None else
                     {"initializer": _share_the_cores, "initargs": (self.threads,)})
            self.pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), **share)
            self.runs = 0
        self.runs += 1
        return self.pool.submit(function, *args)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None


def seed_record(scores: Mapping[str, Any]) -> dict[str, Any]:
    """What a seed loop keeps of one run's `fine_tune_scores`."""
    return {"metric": scores["metric"], "value": scores["value"], "test": scores["test"],
            "best_step": scores["best_step"], "constant": scores["constant"],
            "constant_test": scores["constant_test"],
            "stuck": is_stuck(scores["value"], scores["constant"])}


@dataclasses.dataclass
class SeedLoop:
    """`task` fine-tuned with `overrides` once per seed of `seeds` not in `done` (seed ->
    record, as strings), in `<folder>/seed<k>`. `keep` is called with all records so far
    after each seed; `metric` and `label` go to `fine_tune_scores`. After
    `run_seed_loops`, `records` holds every finished seed and `error` the first failed
    run's error."""

    task: str
    overrides: Sequence[str]
    seeds: Sequence[int]
    folder: str
    done: Mapping[str, Any] | None = None
    keep: Callable[[dict[str, Any]], None] | None = None
    metric: str | None = None
    label: str | None = None
    records: dict[str, Any] = dataclasses.field(init=False)
    error: Exception | None = dataclasses.field(init=False, default=None)

    def __post_init__(self):
        self.records = dict(self.done or {})

    def missing(self) -> list[int]:
        return [seed for seed in self.seeds if str(seed) not in self.records]

    def run_overrides(self, seed: int) -> list[str]:
        return [*self.overrides, f"train.seed={seed}",
                f"train.model_dir={os.path.join(self.folder, f'seed{seed}')}"]

    def announcement(self, seed: int) -> str:
        return (f"fine-tuning {self.label or self.task} in {self.folder}: seed {seed} "
                f"({list(self.seeds).index(seed) + 1} of {len(self.seeds)})")

    def add(self, seed: int, scores: Mapping[str, Any]) -> None:
        """Keeps one finished run's record (the records stay in seed order, whichever run
        finished first)."""
        self.records[str(seed)] = seed_record(scores)
        self.records = dict(sorted(self.records.items(), key=lambda item: int(item[0])))
        if self.keep is not None:
            self.keep(dict(self.records))


def _fine_tune_seed(announcement: str, task: str, overrides: Sequence[str],
                    metric: str | None, label: str | None) -> dict[str, Any]:
    """One run in a worker, announced when it starts (not when it is queued)."""
    print(announcement, flush=True)
    return fine_tune_scores(task, list(overrides), metric, label)


def run_seed_loops(loops: Sequence[SeedLoop], workers: int | None = None) -> None:
    """Runs the missing seeds of every loop in `loops`, `workers` at a time (default
    `fine_tune_workers()`, never more than there are runs; several split the usable cores
    between them, one keeps TensorFlow's own thread counts), in the order of the loops and
    their seeds; each record goes to its loop (`SeedLoop.add`) as its run finishes. A run that
    fails sets its loop's `error` (the first one); every other run still runs and is kept.
    Runs wait here, not in the workers, so an error here (or Ctrl-C) starts no more of them."""
    queue = collections.deque((loop, seed) for loop in loops for seed in loop.missing())
    if not queue:
        return
    count = min(workers or fine_tune_workers(), len(queue))
    idle = [WorkerProcess(threads_per_worker(count)) for _ in range(count)]
    running: dict[Future, tuple[WorkerProcess, SeedLoop, int]] = {}
    try:
        while queue or running:
            while idle and queue:
                worker, (loop, seed) = idle.pop(), queue.popleft()
                future = worker.submit(_fine_tune_seed, loop.announcement(seed), loop.task,
                                       loop.run_overrides(seed), loop.metric, loop.label)
                running[future] = (worker, loop, seed)
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                worker, loop, seed = running.pop(future)
                idle.append(worker)
                error = future.exception()
                if error is None:
                    loop.add(seed, future.result())
                elif loop.error is None:
                    loop.error = error
    finally:
        for worker in [*idle, *(worker for worker, _, _ in running.values())]:
            worker.close()


def fine_tune_seeds(task: str, overrides: Sequence[str], seeds: Sequence[int], folder: str,
                    done: Mapping[str, Any] | None = None,
                    keep: Callable[[dict[str, Any]], None] | None = None,
                    metric: str | None = None, label: str | None = None,
                    workers: int | None = None) -> dict[str, Any]:
    """One `SeedLoop` run by `run_seed_loops`: returns its records (`seed_record`), or raises
    its first run's error."""
    loop = SeedLoop(task, overrides, seeds, folder, done, keep, metric, label)
    run_seed_loops([loop], workers)
    raise_first_error([loop])
    return loop.records
