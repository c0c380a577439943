"""The downstream check at the end of `albert-pretrain`: is the pretrained encoder a better
start than a random one?

A pretraining run can end with healthy-looking losses and still give an encoder that
fine-tunes worse than a random start of the same sizes (a collapsed encoder, or a sentence
head that memorized its training pairs). With `downstream_check.task_dir` set (the CPU preset
sets it), the run is fine-tuned on that task folder (written by `albert-data task`) from
itself and from a random start, one seed and `downstream_check.train_steps` steps each, with
the downstream suite's small-model recipe; the result goes to `downstream_check.json` in the
run folder and a warning is printed when the pretrained start is no better. The fine-tuning
runs live in `<model_dir>/downstream_check/`, so a rerun finds them finished.
"""

from __future__ import annotations

import dataclasses
import json
import os

from albert_tf.finetuning.starts import (
    SMALL_MODEL_RECIPE,
    STARTS,
    dev_scores,
    folder_task,
    start_overrides,
)
from albert_tf.text.files import atomic_write_bytes
from albert_tf.training.config import load_pretrain_config

RESULT_FILE = "downstream_check.json"


@dataclasses.dataclass(frozen=True)
class DownstreamCheck:
    """The two starts' dev scores on one task."""

    task_dir: str
    metric: str
    pretrained: float
    random: float
    train_steps: int
    seed: int

    @property
    def gain(self) -> float:
        return self.pretrained - self.random

    def summary(self) -> str:
        name = os.path.basename(os.path.normpath(self.task_dir))
        return (f"downstream check on {name} ({self.train_steps} fine-tuning steps, seed "
                f"{self.seed}): dev {self.metric} {100 * self.pretrained:.1f} from this run, "
                f"{100 * self.random:.1f} from a random start ({100 * self.gain:+.1f} points)")

    def warning(self) -> str | None:
        if self.gain > 0:
            return None
        return ("warning: the pretrained encoder is no better a start than a random one of "
                "the same sizes on this task: pretraining has not made a better model (see "
                "the held-out accuracies and the representation spread above)")


def missing_task_note(task_dir: str) -> str:
    name = os.path.basename(os.path.normpath(task_dir))
    return (f"downstream check skipped: no task folder at {task_dir} (make it with "
            f"`albert-data task --source {name} --output_dir {task_dir}`, or set "
            f"downstream_check.task_dir to another task folder, or to '' for no check)")


def run_downstream_check(run_dir: str) -> DownstreamCheck | None:
    """Runs the check the run folder's config.yaml asks for; None when it asks for none or
    the task folder does not exist (`missing_task_note` says so)."""
    run = load_pretrain_config(os.path.join(run_dir, "config.yaml"))
    check = run.downstream_check
    if not check.task_dir or not os.path.isdir(check.task_dir):
        return None
    task = folder_task(check.task_dir)
    folder = os.path.join(run_dir, "downstream_check")
    shared = [*SMALL_MODEL_RECIPE, f"train.train_steps={check.train_steps}",
              f"train.eval_every_steps={check.train_steps}",
              f"optimizer.warmup_steps={min(60, check.train_steps // 10)}",
              f"model.spm_model={os.path.join(run_dir, run.tokenizer.spm_model)}",
              f"data.data_dir={check.task_dir}", f"data.max_seq_length={run.data.max_seq_length}",
              f"train.seed={check.seed}"]
    scores = {}
    for start in STARTS:
        overrides = start_overrides(run_dir, start, folder, run.model.to_dict())
        scores[start] = dev_scores(task, [*shared, *overrides,
                                          f"train.model_dir={os.path.join(folder, start)}"])
    result = DownstreamCheck(task_dir=check.task_dir, metric=scores["pretrained"]["metric"],
                             pretrained=scores["pretrained"]["value"],
                             random=scores["random"]["value"], train_steps=check.train_steps,
                             seed=check.seed)
    atomic_write_bytes(os.path.join(run_dir, RESULT_FILE), json.dumps(
        {**dataclasses.asdict(result), "gain": result.gain, "task": task}, indent=1).encode())
    return result
