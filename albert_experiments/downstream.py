"""`albert-experiment downstream RUN_DIR`: does a pretraining run make a better model?

Every task folder under `--tasks_dir` (written by `albert-data task`; its `source.json`
names the `albert-finetune` task that reads it) is fine-tuned with one fixed recipe
(`albert_tf.finetuning.starts.SMALL_MODEL_RECIPE`, at the run's sequence length) and
several seeds from two starts of the same sizes: the pretrained run, and a random start. A
bag-of-words baseline comes beside them (`albert_experiments.bag_of_words`). Per task the
table shows the dev metric of each start (mean over seeds), the baseline, and the
pretrained - random gain with a 95% t-interval over the seeds (paired by seed); then the
average over tasks.

Each fine-tuning run keeps its folder (pretrained runs under `RUN_DIR/downstream/`, random
starts under `RUN_DIR/downstream/random/`), so a rerun skips finished cells and resumes an
interrupted one; a task that fails is reported with its error and the others go on. A
changed recipe (`--override`) is a suite of its own: its runs and report are named
`downstream-<digest of the overrides>`, beside the plain recipe's.
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

import numpy as np

from albert_experiments.bag_of_words import baseline_score
from albert_experiments.intervals import paired_difference
from albert_experiments.variant_downstream import settings_digest
from albert_tf.downstream.glue_tasks import FOLDER_DESCRIPTION
from albert_tf.finetuning.starts import (
    SMALL_MODEL_RECIPE,
    STARTS,
    dev_scores,
    folder_task,
    start_overrides,
)
from albert_tf.text.files import atomic_write_bytes
from albert_tf.training.config import load_pretrain_config

DEFAULT_SEEDS = (1, 2, 3)


def suite_tasks(tasks_dir: str) -> list[tuple[str, str, str]]:
    """(name, albert-finetune task, folder) of every task folder under `tasks_dir`."""
    return [(name, folder_task(os.path.join(tasks_dir, name)), os.path.join(tasks_dir, name))
            for name in sorted(os.listdir(tasks_dir))
            if os.path.exists(os.path.join(tasks_dir, name, FOLDER_DESCRIPTION))]


def _fine_tune(task: str, folder: str, start: list[str], spm_model: str, seq_length: int,
               seed: int, model_dir: str, overrides: Sequence[str]) -> tuple[str, float]:
    """The primary metric's name and dev score of one fine-tuning run."""
    scores = dev_scores(task, [
        *SMALL_MODEL_RECIPE, *overrides, *start, f"model.spm_model={spm_model}",
        f"data.data_dir={folder}",
        f"data.max_seq_length={seq_length}", f"train.seed={seed}",
        f"train.model_dir={model_dir}"])
    return scores["metric"], scores["value"]


def suite_name(overrides: Sequence[str]) -> str:
    """The folder and report name of the suite run with `overrides` (in their order)."""
    return f"downstream-{settings_digest(list(overrides))}" if overrides else "downstream"


def run_downstream(run_dir: str, tasks_dir: str, seeds: Sequence[int] = DEFAULT_SEEDS,
                   overrides: Sequence[str] = ()) -> dict[str, Any]:
    """Fine-tunes `run_dir` and a random start on every task (`SMALL_MODEL_RECIPE`, then
    `overrides`); writes `<suite>.json` (and `.md`; `suite_name`) in `run_dir` after each
    task, so an interrupted run leaves the finished tasks' report, and returns it."""
    run = load_pretrain_config(os.path.join(run_dir, "config.yaml"))
    # The run folder's copy of its tokenizer (config.yaml names it relative to the folder).
    spm_model = os.path.join(run_dir, run.tokenizer.spm_model)
    folder = os.path.join(run_dir, suite_name(overrides))
    starts = {start: start_overrides(run_dir, start, os.path.join(folder, "random"),
                                     run.model.to_dict()) for start in STARTS}
    rows, report = {}, None
    for name, task, task_folder in suite_tasks(tasks_dir):
        try:
            runs = {start: [_fine_tune(task, task_folder, starts[start], spm_model,
                                       run.data.max_seq_length, seed, os.path.join(
                                           folder, *(("random",) if start == "random"
                                                     else ()), name, f"seed{seed}"),
                                       overrides)
                            for seed in seeds] for start in STARTS}
            scores = {start: [score for _, score in runs[start]] for start in STARTS}
            gain, low, high = paired_difference(scores["pretrained"], scores["random"])
            rows[name] = {"task": task, "metric": runs["pretrained"][0][0], "scores": scores,
                          "baseline": baseline_score(task_folder, task),
                          "gain": gain, "gain_low": low, "gain_high": high}
        except Exception as error:  # one task's failure must not lose the others
            rows[name] = {"task": task, "error": f"{type(error).__name__}: {error}"}
            print(f"albert-experiment downstream: {name} failed: {rows[name]['error']}")
        print(f"albert-experiment downstream: {name} done", flush=True)
        report = _write_report(run_dir, tasks_dir, seeds, overrides, rows)  # after each task
    return report or _write_report(run_dir, tasks_dir, seeds, overrides, rows)


def _write_report(run_dir: str, tasks_dir: str, seeds: Sequence[int],
                  overrides: Sequence[str], rows: dict[str, Any]) -> dict[str, Any]:
    report = {"run": run_dir, "tasks_dir": tasks_dir, "seeds": list(seeds),
              "recipe": [*SMALL_MODEL_RECIPE, *overrides], "tasks": rows, "average": _average(rows)}
    atomic_write_bytes(os.path.join(run_dir, f"{suite_name(overrides)}.json"),
                       json.dumps(report, indent=1).encode())
    atomic_write_bytes(os.path.join(run_dir, f"{suite_name(overrides)}.md"),
                       downstream_markdown(report).encode())
    return report


def _average(rows: dict[str, Any]) -> dict[str, float] | None:
    done = [row for row in rows.values() if "error" not in row]
    if not done:
        return None
    pretrained = np.mean([row["scores"]["pretrained"] for row in done], axis=0)
    random = np.mean([row["scores"]["random"] for row in done], axis=0)
    gain, low, high = paired_difference(pretrained, random)
    return {"pretrained": float(pretrained.mean()), "random": float(random.mean()),
            "baseline": float(np.mean([row["baseline"] for row in done])),
            "gain": gain, "gain_low": low, "gain_high": high}


def downstream_markdown(report: dict[str, Any]) -> str:
    """The report as a markdown table, scores in points."""
    lines = [f"# Downstream: {report['run']}", "",
             f"Dev scores (x100), mean over seeds {report['seeds']}; gain = pretrained - "
             f"random, paired by seed, with a 95% t-interval.", "",
             "| task | metric | pretrained | random start | bag of words | gain [95%] |",
             "|---|---|---:|---:|---:|---|"]
    for name, row in report["tasks"].items():
        if "error" in row:
            lines.append(f"| {name} | failed: {row['error']} | | | | |")
            continue
        lines.append(
            f"| {name} | {row['metric']} | {100 * np.mean(row['scores']['pretrained']):.1f} | "
            f"{100 * np.mean(row['scores']['random']):.1f} | {100 * row['baseline']:.1f} | "
            f"{100 * row['gain']:+.1f} [{100 * row['gain_low']:+.1f}, "
            f"{100 * row['gain_high']:+.1f}] |")
    average = report["average"]
    if average:
        lines.append(
            f"| **average** | | {100 * average['pretrained']:.1f} | "
            f"{100 * average['random']:.1f} | {100 * average['baseline']:.1f} | "
            f"{100 * average['gain']:+.1f} [{100 * average['gain_low']:+.1f}, "
            f"{100 * average['gain_high']:+.1f}] |")
    return "\n".join(lines) + "\n"
