"""`albert-experiment downstream RUN_DIR`: does a pretraining run make a better model?

Every task folder under `--tasks_dir` (written by `albert-data task`; its `source.json`
names the `albert-finetune` task that reads it) is fine-tuned with one fixed recipe
(`albert_lab.comparison.recipes.SMALL_MODEL_RECIPE`, at the run's sequence length) and five
seeds (`albert_lab.comparison.seed_loop`) from two starts of the same sizes: the pretrained
run, and a random start. A bag-of-words baseline comes beside them
(`albert_lab.comparison.bag_of_words`). The score of a fine-tune is its test-split score at the
checkpoint its dev split chose (dev's own score when a folder has no test labels); the test
split chooses nothing. Per task the table shows each start's test and dev means, the
baseline, the pretrained - random gain on test with a 95% t-interval paired by seed, and the
fine-tunes stuck at the constant answer (`albert_tf.finetuning.stuck`); a task whose random
start got stuck on a seed shows no gain but "failed" (`albert_lab.comparison.gain`).
Then the average over the tasks whose comparison did not fail.

Each fine-tuning run keeps its folder, named by its task and a digest of the task folder's
data (pretrained runs under `RUN_DIR/downstream/<task>-<digest>/`, random starts under
`<tasks_dir>/random_starts/<digest of the sizes, tokenizer and recipe>/<task>-<digest>/`,
shared by every run of the same sizes), so a rerun skips finished seeds and resumes an
interrupted one, and a task folder written anew is fine-tuned anew; a task that fails is
reported with its error and the others go on. A changed recipe (`--override`, or a
sequence length other than the run's) is a suite of its own: its runs and report are named
`downstream-<digest of the overrides>`, beside the plain recipe's.

Random-start folders stay on the machine that made them. With `random_records` (a folder
kept in git), each finished random-start seed is also written to
`<random_records>/<random-start digest>/<task>-<data digest>.json`, and seeds found there
are not fine-tuned again: another machine goes on from the committed records, as a table
does from its own (`albert_lab.ablations.records`).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from albert_lab.comparison.bag_of_words import baseline_score
from albert_lab.comparison.gain import (
    compare_starts,
    paired_difference,
    points_interval,
    split_scores,
    stuck_seeds,
)
from albert_lab.comparison.recipes import SMALL_MODEL, SMALL_MODEL_RECIPE, SMALL_MODEL_RECIPES
from albert_lab.comparison.seed_loop import (
    DEFAULT_SEEDS,
    SeedLoop,
    raise_first_error,
    run_seed_loops,
)
from albert_lab.comparison.starts import STARTS, folder_task, start_overrides
from albert_tf.config import ConfigError
from albert_tf.config.pretraining import load_pretrain_config
from albert_tf.io.files import atomic_write_bytes, file_digest
from albert_tf.task_data.glue import test_labels_path
from albert_tf.task_data.glue_table import FOLDER_DESCRIPTION

RANDOM_STARTS = "random_starts"  # the random starts' folder under --tasks_dir by default


def settings_digest(settings: Mapping[str, Any] | Sequence[str]) -> str:
    """Eight hex digits naming settings, a mapping or a list of overrides (a folder per
    settings)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]


def suite_tasks(tasks_dir: str) -> list[tuple[str, str, str]]:
    """(name, albert-finetune task, folder) of every task folder under `tasks_dir`."""
    return [(name, folder_task(os.path.join(tasks_dir, name)), os.path.join(tasks_dir, name))
            for name in sorted(os.listdir(tasks_dir))
            if os.path.exists(os.path.join(tasks_dir, name, FOLDER_DESCRIPTION))]


def suite_name(overrides: Sequence[str]) -> str:
    """The folder and report name of the suite run with `overrides` (in their order)."""
    return f"downstream-{settings_digest(list(overrides))}" if overrides else "downstream"


def named_overrides(overrides: Sequence[str], run_seq_length: int,
                    seq_length: int) -> list[str]:
    """What sets a suite run apart from the fixed recipe at the run's own sequence length
    (`run_seq_length`), and so names it (`suite_name`): `overrides`, and the fine-tunes'
    `seq_length` unless it is the run's."""
    return [*overrides, *([f"data.max_seq_length={seq_length}"]
                          if seq_length != run_seq_length else [])]


def random_start_folder(random_starts: str, model_config: dict[str, Any], spm_model: str,
                        recipe: Sequence[str]) -> str:
    """`<random_starts>/<digest>`: where the random start of these model sizes, tokenizer
    (its bytes) and recipe (the overrides, sequence length included) is fine-tuned, once for
    every run and table that shares them."""
    return os.path.join(random_starts, settings_digest({
        "model": model_config, "tokenizer": file_digest([spm_model]), "recipe": list(recipe)}))


def task_data_digest(task_folder: str) -> str:
    """A digest of the task folder's data (its .tsv files): the fine-tunes of a task folder
    written anew are kept apart from the earlier folder's."""
    return settings_digest(file_digest([os.path.join(task_folder, file_name)
                                        for file_name in sorted(os.listdir(task_folder))
                                        if file_name.endswith(".tsv")]))


def random_record_path(random_records: str, random_folder: str, name: str, data: str) -> str:
    """Where the committed seed records of one task's random start are kept:
    `<random_records>/<random-start digest>/<task>-<data digest>.json`."""
    return os.path.join(random_records, os.path.basename(random_folder), f"{name}-{data}.json")


def read_seed_records(path: str | None) -> dict[str, Any]:
    """Seed -> record of a random start's record file (empty when there is none)."""
    if path is None or not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _record_keeper(path: str | None):
    """Writes a seed loop's records (all so far) to `path`, keeping seeds it already held."""
    if path is None:
        return None

    def keep(records: dict[str, Any]) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        merged = {**read_seed_records(path), **records}
        atomic_write_bytes(path, json.dumps(dict(sorted(merged.items(), key=lambda item: int(
            item[0]))), indent=1).encode())
    return keep


def _task_loops(name: str, task: str, task_folder: str, shared: Sequence[str],
                starts: dict[str, list[str]], folders: dict[str, str], seeds: Sequence[int],
                stored: dict[str, Any], random_records: str | None,
                after_each: Callable[[], None]) -> dict[str, SeedLoop]:
    """One task's seed loop per start (`after_each` called after each of their seeds). Each
    start's runs are kept under its folder of `folders` per task and digest of the task's
    data, and `stored` (this task's row of an earlier report) gives the seeds already done
    when it was made from the same data: a changed task folder is fine-tuned anew. The
    random start's seeds are also read from and written to its record file under
    `random_records` (`random_record_path`), when given; seeds the stored report already had
    are written there too."""
    data = task_data_digest(task_folder)
    done = stored.get("seeds", {}) if stored.get("data") == data else {}
    record_file = (random_record_path(random_records, folders["random"], name, data)
                   if random_records else None)
    done = {**done, "random": {**read_seed_records(record_file), **done.get("random", {})}}
    keep_random = _record_keeper(record_file)
    if keep_random is not None and done["random"]:
        keep_random(done["random"])
    keepers = {"pretrained": None, "random": keep_random}

    def keeper(start):
        def keep(records):
            if keepers[start] is not None:
                keepers[start](records)
            after_each()
        return keep

    return {start: SeedLoop(
        task, [*shared, *starts[start], f"data.data_dir={task_folder}"], seeds,
        os.path.join(folders[start], f"{name}-{data}"),
        {seed: run for seed, run in done.get(start, {}).items() if int(seed) in seeds},
        keep=keeper(start), label=name) for start in STARTS}


def _task_row(task: str, task_folder: str, loops: dict[str, SeedLoop]) -> dict[str, Any]:
    """One task's seeds from both starts, their comparison and the bag-of-words baseline;
    raises the first error of its loops."""
    raise_first_error(list(loops.values()))
    records = {start: loop.records for start, loop in loops.items()}
    comparison = compare_starts(records["pretrained"], records["random"])
    baseline = {"dev": baseline_score(task_folder, task)}
    if test_labels_path(task_folder):
        baseline["test"] = baseline_score(task_folder, task, "test")
    return {"task": task, "data": task_data_digest(task_folder),
            "metric": next(iter(records["pretrained"].values()))["metric"], "seeds": records,
            "baseline": baseline, "comparison": comparison.to_dict()}


def run_downstream(run_dir: str, tasks_dir: str, seeds: Sequence[int] = DEFAULT_SEEDS,
                   overrides: Sequence[str] = (), random_starts: str | None = None,
                   random_records: str | None = None, max_seq_length: int | None = None
                   ) -> dict[str, Any]:
    """Fine-tunes `run_dir` and a random start on every task (`SMALL_MODEL_RECIPE`, then
    `overrides`) at `max_seq_length` (default: the run's pretraining length; a longer one
    needs the run's position table to reach it, and fine-tuning alone trains the positions
    pretraining never saw), every task's seeds side by side (`run_seed_loops`); writes
    `<suite>.json` (and `.md`; `suite_name` of `named_overrides`) in `run_dir` as each task
    finishes, so an interrupted run leaves the finished tasks' report, and returns it. Random
    starts are fine-tuned under `random_starts` (default `<tasks_dir>/random_starts`;
    `random_start_folder`), so runs of the same sizes share them, and their seed records are
    kept under `random_records` when given (`random_record_path`)."""
    run = load_pretrain_config(os.path.join(run_dir, "config.yaml"))
    # The run folder's copy of its tokenizer (config.yaml names it relative to the folder).
    spm_model = os.path.join(run_dir, run.tokenizer.spm_model)
    seq_length = max_seq_length or run.data.max_seq_length
    if seq_length > run.model.max_position_embeddings:
        raise ConfigError(f"max_seq_length {seq_length} exceeds the position table of {run_dir} "
                          f"(model.max_position_embeddings {run.model.max_position_embeddings})")
    recipe = [*SMALL_MODEL_RECIPE, *overrides, f"data.max_seq_length={seq_length}"]
    named = named_overrides(overrides, run.data.max_seq_length, seq_length)
    shared = [*recipe, f"model.spm_model={spm_model}"]
    random_folder = random_start_folder(random_starts or os.path.join(tasks_dir, RANDOM_STARTS),
                                        run.model.to_dict(), spm_model, recipe)
    folders = {"pretrained": os.path.join(run_dir, suite_name(named)),
               "random": random_folder}
    starts = {start: start_overrides(run_dir, start, random_folder, run.model.to_dict())
              for start in STARTS}
    report_path = os.path.join(run_dir, f"{suite_name(named)}.json")
    stored = _stored_rows(report_path, named)
    tasks = {name: (task, task_folder) for name, task, task_folder in suite_tasks(tasks_dir)}
    rows, loops = {}, {}

    def write_report() -> dict[str, Any]:
        return _write_report(run_dir, tasks_dir, seeds, named,
                             {name: rows[name] for name in tasks if name in rows},
                             random_folder)

    def finish(name: str) -> None:
        """The task's row, once both starts have every seed (or one failed)."""
        task, task_folder = tasks[name]
        try:
            rows[name] = _task_row(task, task_folder, loops[name])
        except Exception as error:  # one task's failure must not lose the others
            rows[name] = {"task": task, "error": f"{type(error).__name__}: {error}"}
            print(f"albert-experiment downstream: {name} failed: {rows[name]['error']}")
        print(f"albert-experiment downstream: {name} done", flush=True)
        write_report()

    def after_each(name: str) -> Callable[[], None]:
        def check():
            if name not in rows and not any(loop.missing() for loop in loops[name].values()):
                finish(name)
        return check

    for name, (task, task_folder) in tasks.items():
        try:
            loops[name] = _task_loops(name, task, task_folder, shared, starts, folders,
                                      seeds, stored.get(name, {}), random_records,
                                      after_each(name))
        except Exception as error:
            rows[name] = {"task": task, "error": f"{type(error).__name__}: {error}"}
            print(f"albert-experiment downstream: {name} failed: {rows[name]['error']}")
    # Every task's seeds side by side (`run_seed_loops`); a task's row is written as its
    # last seed finishes, and tasks with nothing left to run (or a failed run) after.
    run_seed_loops([loop for task_loops in loops.values() for loop in task_loops.values()])
    for name in loops:
        if name not in rows:
            finish(name)
    return write_report()


def _stored_rows(path: str, overrides: Sequence[str]) -> dict[str, Any]:
    """The task rows of an earlier report of the same recipe (their finished seeds are not
    fine-tuned again, which keeps a rerun from reloading every finished run)."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        stored = json.load(f)
    if stored.get("recipe") != [*SMALL_MODEL_RECIPE, *overrides]:
        return {}
    return {name: row for name, row in stored.get("tasks", {}).items() if "seeds" in row}


def _write_report(run_dir: str, tasks_dir: str, seeds: Sequence[int],
                  overrides: Sequence[str], rows: dict[str, Any], random_folder: str
                  ) -> dict[str, Any]:
    report = {"run": run_dir, "tasks_dir": tasks_dir, "seeds": list(seeds),
              "recipe_name": SMALL_MODEL, "recipe": [*SMALL_MODEL_RECIPE, *overrides],
              "random_start": os.path.basename(random_folder),
              "tasks": rows, "average": suite_average(rows)}
    atomic_write_bytes(os.path.join(run_dir, f"{suite_name(overrides)}.json"),
                       json.dumps(report, indent=1).encode())
    atomic_write_bytes(os.path.join(run_dir, f"{suite_name(overrides)}.md"),
                       downstream_markdown(report).encode())
    return report


def _start_means(row: dict[str, Any], split: str) -> dict[str, float]:
    return {start: float(np.mean(list(split_scores(row["seeds"][start], split).values())))
            for start in STARTS}


def suite_average(rows: dict[str, Any]) -> dict[str, Any] | None:
    """The mean over the finished tasks whose comparison did not fail (a random start stuck
    on a seed is no reference), per seed both starts finished on every such task, each task
    on the split its comparison used; the gain paired by seed; the failed tasks named; the
    stuck fine-tunes of every task counted."""
    finished = [row for row in rows.values() if "error" not in row]
    done = [row for row in finished if row["comparison"]["verdict"] != "failed"]
    if not done:
        return None
    common = set.intersection(*(set(row["seeds"][start]) for row in done for start in STARTS))
    seeds = sorted(common, key=int)
    if not seeds:
        return None
    per_seed = {start: [float(np.mean([split_scores(row["seeds"][start],
                                                    row["comparison"]["split"])[seed]
                                       for row in done])) for seed in seeds]
                for start in STARTS}
    gain, low, high = paired_difference(per_seed["pretrained"], per_seed["random"])
    splits = sorted({row["comparison"]["split"] for row in done})
    baseline = [row["baseline"].get(row["comparison"]["split"], row["baseline"]["dev"])
                for row in done]
    stuck = {start: sum(len(stuck_seeds(row["seeds"][start])) for row in finished)
             for start in STARTS}
    return {"split": "+".join(splits), "seeds": len(seeds),
            "pretrained": float(np.mean(per_seed["pretrained"])),
            "random": float(np.mean(per_seed["random"])), "baseline": float(np.mean(baseline)),
            "gain": gain, "gain_low": low, "gain_high": high, "stuck": stuck,
            "failed": [name for name, row in rows.items()
                       if "error" not in row and row["comparison"]["verdict"] == "failed"]}


def _points(value: float) -> str:
    return f"{100 * value:.1f}"


def _stuck_cell(row: dict[str, Any]) -> str:
    counts = [f"{len(stuck_seeds(row['seeds'][start]))} of {len(row['seeds'][start])}"
              for start in STARTS]
    return " / ".join(counts)


def recipe_description(report: dict[str, Any]) -> str:
    """`Recipe `name`` and, for a suite run with `--override`, the overrides it added."""
    name = report.get("recipe_name", SMALL_MODEL)
    base, recipe = list(SMALL_MODEL_RECIPES.get(name, ())), list(report.get("recipe", []))
    added = recipe[len(base):] if recipe[:len(base)] == base else []
    return f"Recipe `{name}`" + (" with " + ", ".join(f"`{item}`" for item in added)
                                 if added else "")


def downstream_markdown(report: dict[str, Any]) -> str:
    """The report as a markdown table, scores in points."""
    lines = [f"# Downstream: {report['run']}", "",
             f"{recipe_description(report)}, seeds {report['seeds']}. "
             f"Scores (x100) are means over seeds on the test split, at the checkpoint the dev "
             f"split chose (dev beside them); gain = pretrained - random on test, paired by "
             f"seed, with a 95% t-interval. Stuck: fine-tunes whose best dev score is within a "
             f"point of one answer for every example (pretrained / random start); a task "
             f"whose random start stuck on a seed has no gain: the comparison failed.", "",
             "| task | metric | pretrained test (dev) | random start test (dev) | "
             "bag of words test (dev) | gain on test [95%] | stuck |",
             "|---|---|---:|---:|---:|---|---|"]
    for name, row in report["tasks"].items():
        if "error" in row:
            lines.append(f"| {name} | failed: {row['error']} | | | | | |")
            continue
        comparison, baseline = row["comparison"], row["baseline"]
        scored, dev = _start_means(row, comparison["split"]), _start_means(row, "dev")
        gain = ("failed: random start stuck" if comparison["verdict"] == "failed"
                else points_interval(comparison["gain"], comparison["low"],
                                 comparison["high"]))
        if comparison["split"] == "dev":
            gain += " (dev: no test labels)"
        bag = baseline.get(comparison["split"], baseline["dev"])
        lines.append(
            f"| {name} | {row['metric']} | {_points(scored['pretrained'])} "
            f"({_points(dev['pretrained'])}) | {_points(scored['random'])} "
            f"({_points(dev['random'])}) | {_points(bag)} ({_points(baseline['dev'])}) | "
            f"{gain} | {_stuck_cell(row)} |")
    average = report["average"]
    if average:
        gain = points_interval(average["gain"], average["gain_low"], average["gain_high"])
        if average["failed"]:
            gain += f" (without {', '.join(average['failed'])}: failed)"
        lines.append(
            f"| **average** | {average['split']} | {_points(average['pretrained'])} | "
            f"{_points(average['random'])} | {_points(average['baseline'])} | {gain} | "
            f"{average['stuck']['pretrained']} / {average['stuck']['random']} |")
    return "\n".join(lines) + "\n"
