"""Keras callbacks of a fine-tuning run: dev evaluation with the task's own metrics, keeping
the best checkpoint, stopping early when dev stops improving, and stopping at the configured
step."""

from __future__ import annotations

import json
import math
import os
from typing import Callable

import tensorflow as tf
import tf_keras

from albert_tf.checkpoints.reading import restore_checked
from albert_tf.io.files import atomic_write_bytes
from albert_tf.io.summaries import scalars_at

BEST_FILE = "best.json"
HISTORY_FILE = "eval_history.jsonl"


def weights_checkpoint(model) -> tf.train.Checkpoint:
    """The task model's weights without its optimizer: encoder and head."""
    return tf.train.Checkpoint(encoder=model.encoder, head=model.head)


def restore_weights(model, checkpoint: str) -> None:
    """Restores every weight of the task model (encoder and head) from a `best/ckpt-N` of
    its run; a weight the checkpoint lacks, or of another shape, or NaN or infinity in it,
    is a CheckpointError naming them, and nothing is restored then."""
    restore_checked(weights_checkpoint(model), checkpoint,
                    [*model.encoder.weights, *model.head.weights])


def read_best(model_dir: str) -> dict | None:
    """`{"step", "checkpoint", "metric", "value", "metrics"}` of the best evaluation so far."""
    path = os.path.join(model_dir, BEST_FILE)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def is_better(score: float, best: dict | None) -> bool:
    """Whether a dev score beats the best so far (`read_best`'s record, None before the
    first): a NaN or infinite score never does, and any finite one beats a NaN a run made
    before this check recorded."""
    return math.isfinite(score) and (best is None or not math.isfinite(best["value"])
                                     or score > best["value"])


class DevEvaluation(tf_keras.callbacks.Callback):
    """At every epoch end (every `eval_every_steps`), scores the dev set with `evaluate()` ->
    {split: {metric: value}}; logs it (console, TensorBoard run `dev`, `eval_history.jsonl`)
    and, when `metric` on the first split beats the best so far (`is_better`: never a NaN),
    saves the model as `best/ckpt-<step>` and records it in `best.json` (the previous best is
    deleted after).

    Args:
        evaluate: the function that predicts and scores the dev splits.
        model_dir: the run folder.
        metric: the task's selection metric (higher is better).
        log_dir: TensorBoard folder.
        patience_steps: stop training once the best evaluation is this many steps behind
            the current one (0: never); read from `best.json`, so it survives a resume.
    """

    def __init__(self, evaluate: Callable[[], dict[str, dict[str, float]]], model_dir: str,
                 metric: str, log_dir: str, patience_steps: int = 0):
        super().__init__()
        self.evaluate = evaluate
        self.model_dir = model_dir
        self.metric = metric
        self.patience_steps = patience_steps
        self._writer = tf.summary.create_file_writer(os.path.join(log_dir, "dev"))

    def on_epoch_end(self, epoch, logs=None):
        step = int(self.model.optimizer.iterations.numpy())
        results = self.evaluate()
        first = next(iter(results.values()))
        with scalars_at(self._writer, step):
            for split, scores in results.items():
                for name, value in scores.items():
                    tf.summary.scalar(f"{split}/{name}", value)
        with open(os.path.join(self.model_dir, HISTORY_FILE), "a", encoding="utf-8") as f:
            f.write(json.dumps({"step": step, **results}) + "\n")
        best = read_best(self.model_dir)
        improved = is_better(first[self.metric], best)
        shown = ", ".join(f"{name} {value:.4f}" for name, value in first.items())
        print(f"\nstep {step}: dev {shown}" + ("  (best so far)" if improved else ""))
        if improved:
            self._save_best(step, first, best)
        elif best is not None and self.patience_steps and \
                step - best["step"] >= self.patience_steps:
            print(f"stopping early at step {step}: dev {self.metric} has not beaten step "
                  f"{best['step']}'s {best['value']:.4f} for {step - best['step']} steps")
            self.model.stop_training = True

    def _save_best(self, step: int, scores: dict[str, float], previous: dict | None):
        checkpoint = os.path.join(self.model_dir, "best", f"ckpt-{step}")
        weights_checkpoint(self.model).write(checkpoint)
        record = {"step": step, "checkpoint": os.path.relpath(checkpoint, self.model_dir),
                  "metric": self.metric, "value": scores[self.metric], "metrics": scores}
        atomic_write_bytes(os.path.join(self.model_dir, BEST_FILE),
                           json.dumps(record, indent=2).encode())
        if previous is not None and previous["checkpoint"] != record["checkpoint"]:
            for path in tf.io.gfile.glob(os.path.join(self.model_dir,
                                                      previous["checkpoint"]) + ".*"):
                tf.io.gfile.remove(path)

    def on_train_end(self, logs=None):
        self._writer.close()


class StopAtStep(tf_keras.callbacks.Callback):
    """Stops `fit` once the optimizer has taken `last_step` steps (the last evaluation
    interval may be shorter than the others)."""

    def __init__(self, last_step: int):
        super().__init__()
        self.last_step = last_step

    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations.numpy()) >= self.last_step:
            self.model.stop_training = True
