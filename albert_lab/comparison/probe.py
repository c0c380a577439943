"""The frozen-feature probe: how much of a task a start's encoder holds before fine-tuning.

Fine-tuning moves every weight, so its score mixes what the encoder brought with what 600
steps of the task taught it. A linear probe leaves the encoder as it is: every example of a
task folder is encoded once, and a linear model (scikit-learn's logistic regression, or
ridge regression for a similarity task) is fitted on the train split's outputs, its L2
strength chosen on dev and scored on test, for each of two features:

    pooled  the pooled output (dense + tanh on [CLS]) that every classifier head reads,
            `(batch_size, hidden_size)`; only the sentence objective trains it;
    mean    the sequence output averaged over each example's real pieces,
            `(batch_size, hidden_size)`: what the masked-LM objective trains.

The same is done for random encoders of the run's sizes (one per seed), so the gap between
the two starts is what pretraining put into the features. It costs one forward pass over
each split per start: seconds for a small model, against an hour of fine-tunes.

    report = probe_run("runs/prose_full/run", "runs/tasks", seeds=(1, 2, 3))
    report["tasks"]["rotten-tomatoes"]["pretrained"]["mean"]  # {"strength", "dev", "test"}
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import tensorflow as tf
import tf_keras

from albert_lab.comparison.recipes import SMALL_MODEL_RECIPE
from albert_lab.comparison.suite import suite_tasks, task_data_digest
from albert_tf.config.finetuning import load_finetune_config, recipe_path
from albert_tf.config.pretraining import load_pretrain_config
from albert_tf.finetuning.datasets import evaluation_dataset
from albert_tf.finetuning.feature_cache import CachedFeatures
from albert_tf.finetuning.initialization import load_pretrained_encoder
from albert_tf.finetuning.runner import SplitPreparer
from albert_tf.finetuning.task_kinds import FinetuneTask, get_task
from albert_tf.io.files import atomic_write_bytes
from albert_tf.layers.pooler import masked_mean
from albert_tf.models.encoder import INPUT_NAMES, AlbertEncoder
from albert_tf.tokenization import AlbertTokenizer

FEATURES = ("pooled", "mean")
# Inverse L2 strengths tried on dev (logistic regression's C; ridge's alpha is 1 / C).
STRENGTHS = (0.01, 0.1, 1.0, 10.0)
RESULT_FILE = "probe.json"
# The tasks probed so far, written after each task and removed with the report's writing: an
# interrupted probe (a stopped session) starts again at its first unfinished task.
PROGRESS_FILE = "probe_progress.json"
SPLITS = ("train", "dev", "test")


def inference_pass(encoder: AlbertEncoder) -> Callable[[dict], dict]:
    """`encoder` with dropout off as one tf.function over batches of any size and length:
    traced once, however many splits it then reads."""
    signature = {name: tf.TensorSpec([None, None], tf.int32) for name in INPUT_NAMES}
    return tf.function(lambda inputs: encoder(inputs, training=False),
                       input_signature=[signature])


def encoder_outputs(encoder: AlbertEncoder, features: CachedFeatures, batch_size: int = 128,
                    trim_multiple: int = 16,
                    forward: Callable[[dict], dict] | None = None) -> dict[str, np.ndarray]:
    """{"pooled", "mean"}: `(features.count, hidden_size)` float32 arrays, the encoder's
    pooled output and its sequence output averaged over each row's real pieces (dropout
    off). Batches are cut to their longest row, which changes no real piece's output.
    `forward`: `inference_pass(encoder)` made once, to share its trace between calls."""
    forward = forward or inference_pass(encoder)
    pooled, mean = [], []
    for batch in evaluation_dataset(features, INPUT_NAMES, batch_size, trim_multiple):
        outputs = forward(batch)
        mean.append(masked_mean(outputs["sequence_output"], batch["input_mask"]).numpy())
        pooled.append(outputs["pooled_output"].numpy())
    return {"pooled": np.concatenate(pooled)[:features.count].astype(np.float32),
            "mean": np.concatenate(mean)[:features.count].astype(np.float32)}


@dataclasses.dataclass(frozen=True)
class ProbeScore:
    """One feature's probe: the strength dev chose, and the task's primary metric on dev
    and (None without labels) on test with it."""

    strength: float
    dev: float
    test: float | None


def fit_probe(inputs: Mapping[str, np.ndarray], targets: np.ndarray, regression: bool,
              score: Callable[[str, np.ndarray], float], has_test: bool,
              strengths: Sequence[float] = STRENGTHS) -> ProbeScore:
    """Fits a linear model on `inputs["train"]` -> `targets` (standardized with train's
    mean and spread) once per strength, keeps the one whose dev predictions `score` best
    (the weakest regularization on a tie) and scores it on test. `score(split, predicted)`
    takes class ids, or values for a regression; test is never used to choose."""
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(inputs["train"])
    scaled = {split: scaler.transform(values) for split, values in inputs.items()}
    best = None
    for strength in sorted(strengths, reverse=True):
        model = (Ridge(alpha=1.0 / strength) if regression
                 else LogisticRegression(C=strength, max_iter=2000))
        model.fit(scaled["train"], targets)
        dev = score("dev", model.predict(scaled["dev"]))
        if best is None or dev > best[1]:
            best = (strength, dev, model)
    strength, dev, model = best
    test = score("test", model.predict(scaled["test"])) if has_test else None
    return ProbeScore(strength, float(dev), None if test is None else float(test))


def _task_outputs(task: FinetuneTask, predicted: np.ndarray) -> dict[str, np.ndarray]:
    """`predicted` (class ids or values) as the task model's outputs, for `task.evaluate`."""
    if task.kind == "regression":
        return {"predictions": predicted.astype(np.float32)}
    return {"logits": np.eye(len(task.spec.labels), dtype=np.float32)[predicted.astype(int)]}


class TaskProbe:
    """One task folder's splits, converted once, probed for any number of encoders."""

    def __init__(self, task: FinetuneTask, tokenizer: AlbertTokenizer, cache_dir: str):
        if task.kind not in ("classification", "regression") or not hasattr(task, "spec"):
            raise ValueError(f"{task.name}: the probe reads single-label tasks (GLUE-style "
                             f"classification or similarity), not {task.kind}")
        self.task = task
        prepare = SplitPreparer(task, tokenizer, cache_dir)
        self.splits = {split: prepare(split) for split in SPLITS
                       if split == "train" or task.has_split(split)}
        self.has_test = "test" in self.splits and task.has_labels("test")
        if not self.has_test:
            self.splits.pop("test", None)
        if task.kind == "classification" and len(np.unique(
                self.splits["train"].arrays["label"])) < 2:
            raise ValueError(f"{task.data_dir}: every training example has the same label; "
                             f"a probe needs two classes or more")
        labelled = [split for split in ("dev", "test") if split in self.splits]
        self.constant = {split: task.constant_score(self.splits[split].examples,
                                                    self.splits[split].arrays)
                         for split in labelled}

    def score(self, split: str, predicted: np.ndarray) -> float:
        data = self.splits[split]
        return self.task.evaluate(data.examples, data.arrays,
                                  _task_outputs(self.task, predicted))[self.task.primary_metric]

    def probe(self, encoder: AlbertEncoder) -> dict[str, ProbeScore]:
        """feature -> its probe score for `encoder`."""
        forward = inference_pass(encoder)
        outputs = {split: encoder_outputs(encoder, data.features, forward=forward)
                   for split, data in self.splits.items()}
        targets = self.splits["train"].arrays["label"]
        return {feature: fit_probe({split: values[feature] for split, values in outputs.items()},
                                   targets, self.task.kind == "regression", self.score,
                                   self.has_test)
                for feature in FEATURES}


def random_encoder(config, seed: int) -> AlbertEncoder:
    """A freshly initialized encoder of `config`'s sizes, the same for the same seed."""
    tf_keras.utils.set_random_seed(seed)
    encoder = AlbertEncoder(config)
    ids = tf.zeros((1, 8), tf.int32)
    encoder({"input_word_ids": ids, "input_mask": tf.ones_like(ids),
             "input_type_ids": ids}, training=False)
    return encoder


def _as_dict(scores: Mapping[str, ProbeScore]) -> dict[str, dict[str, Any]]:
    return {feature: dataclasses.asdict(score) for feature, score in scores.items()}


def probe_run(run_dir: str, tasks_dir: str, seeds: Sequence[int] = (1, 2, 3),
              tasks: Sequence[str] | None = None, output_dir: str | None = None
              ) -> dict[str, Any]:
    """Probes the pretraining run `run_dir` and a random encoder of its sizes per seed on
    every single-label task folder under `tasks_dir` (or those named in `tasks`), at the
    run's sequence length as the downstream suite fine-tunes; writes `probe.json` and
    `probe.md` into `output_dir` (default: the run folder) and returns the report.

    Each task's scores are kept in `<output_dir>/probe_progress.json` as soon as they are
    made; run again after an interruption, the probe takes from there the tasks probed with
    the same checkpoint, seeds, strengths, sequence length and task data, and probes only
    the rest."""
    run = load_pretrain_config(os.path.join(run_dir, "config.yaml"))
    spm_model = os.path.join(run_dir, run.tokenizer.spm_model)
    output_dir = output_dir or run_dir
    report = {"run": run_dir, "seeds": list(seeds), "strengths": list(STRENGTHS),
              "max_seq_length": run.data.max_seq_length, "tasks": {}}
    found = suite_tasks(tasks_dir)
    unknown = sorted(set(tasks or ()) - {name for name, _, _ in found})
    if unknown:
        raise ValueError(f"--tasks_dir {tasks_dir} has no task folder {', '.join(unknown)}")
    progress = _Progress(os.path.join(output_dir, PROGRESS_FILE), report)
    pretrained = None
    for name, task_name, folder in found:
        if tasks and name not in tasks:
            continue
        config = load_finetune_config(recipe_path(task_name), [
            *SMALL_MODEL_RECIPE, f"data.max_seq_length={run.data.max_seq_length}",
            f"model.spm_model={spm_model}", f"model.init_checkpoint={run_dir}",
            f"data.data_dir={folder}", f"train.model_dir={output_dir}"], task=task_name)
        pretrained = pretrained or load_pretrained_encoder(config)
        data = task_data_digest(folder)
        kept = progress.row(pretrained.source, name, data)
        if kept is not None:
            print(f"albert-experiment probe: {name} (kept from an earlier start)", flush=True)
            report["tasks"][name] = kept
            continue
        try:
            probe = TaskProbe(get_task(config),
                              AlbertTokenizer(pretrained.spm_model, pretrained.lower_case),
                              os.path.join(output_dir, "probe_features"))
        except ValueError as error:
            print(f"albert-experiment probe: {name} left out: {error}")
            continue
        print(f"albert-experiment probe: {name}", flush=True)
        report["tasks"][name] = {
            "task": task_name, "metric": probe.task.primary_metric, "constant": probe.constant,
            "pretrained": _as_dict(probe.probe(pretrained.encoder)),
            "random": {str(seed): _as_dict(probe.probe(random_encoder(pretrained.config, seed)))
                       for seed in seeds}}
        progress.keep(pretrained.source, name, data, report["tasks"][name])
    atomic_write_bytes(os.path.join(output_dir, RESULT_FILE),
                       json.dumps(report, indent=1).encode())
    atomic_write_bytes(os.path.join(output_dir, "probe.md"), probe_markdown(report).encode())
    progress.finish()
    return report


class _Progress:
    """`probe_progress.json`: the task rows of an unfinished probe, under what made them
    (the pretrained checkpoint as `load_pretrained_encoder` names it, the seeds, strengths
    and sequence length; each row with its task folder's data digest)."""

    def __init__(self, path: str, report: Mapping[str, Any]):
        self.path = path
        self.settings = {key: report[key] for key in ("seeds", "strengths", "max_seq_length")}
        self.stored = {}
        if os.path.exists(path):
            try:
                with open(path) as f:
                    self.stored = json.load(f)
            except (OSError, ValueError):  # unreadable: probe those tasks again
                self.stored = {}

    def row(self, source: str, name: str, data: str) -> dict[str, Any] | None:
        """The kept row of task `name`, if it was made from the same start and data."""
        if self.stored.get("settings") != {**self.settings, "source": source}:
            return None
        kept = self.stored.get("tasks", {}).get(name)
        return kept["row"] if kept and kept.get("data") == data else None

    def keep(self, source: str, name: str, data: str, row: Mapping[str, Any]) -> None:
        settings = {**self.settings, "source": source}
        if self.stored.get("settings") != settings:
            self.stored = {"settings": settings, "tasks": {}}
        self.stored["tasks"][name] = {"data": data, "row": row}
        atomic_write_bytes(self.path, json.dumps(self.stored, indent=1).encode())

    def finish(self) -> None:
        if os.path.exists(self.path):
            os.remove(self.path)


def _cell(scores: Sequence[Mapping[str, Any]], split: str) -> str:
    values = [score[split] for score in scores if score[split] is not None]
    if not values:
        return "-"
    mean = 100 * sum(values) / len(values)
    spread = (f" ({100 * min(values):.1f} to {100 * max(values):.1f})"
              if len(values) > 1 else "")
    return f"{mean:.1f}{spread}"


def probe_markdown(report: Mapping[str, Any]) -> str:
    """The report as a table: per task and feature, the test score (dev where a task has no
    labelled test split) of the pretrained encoder and of the random ones (mean, range)."""
    lines = [f"# Frozen-feature probe of {report['run']}", "",
             f"A linear model on each start's encoder outputs (sequences of "
             f"{report['max_seq_length']}), fitted on train, its L2 strength chosen on dev "
             f"from {', '.join(f'{value:g}' for value in report['strengths'])}; scores on "
             f"test (dev where the task has no test labels), x 100. Random: seeds "
             f"{', '.join(map(str, report['seeds']))}, mean (range).", "",
             "| task | metric | one answer | feature | pretrained | random | pretrained - random |",
             "|---|---|---|---|---|---|---|"]
    for name, row in report["tasks"].items():
        split = "test" if row["pretrained"]["mean"]["test"] is not None else "dev"
        constant = row["constant"].get(split)
        constant_cell = "-" if constant is None else f"{100 * constant:.1f}"
        for feature in FEATURES:
            ours = row["pretrained"][feature]
            theirs = [scores[feature] for scores in row["random"].values()]
            gap = (100 * (ours[split] - sum(score[split] for score in theirs) / len(theirs))
                   if theirs else None)
            lines.append(f"| {name} | {row['metric']} ({split}) | {constant_cell} | {feature} | "
                         f"{_cell([ours], split)} | {_cell(theirs, split)} | "
                         f"{'-' if gap is None else f'{gap:+.1f}'} |")
    return "\n".join(lines) + "\n"
