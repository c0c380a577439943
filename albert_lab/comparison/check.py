"""The quickstart's downstream check (`albert-experiment check`): is a pretraining run a
better start than a random one?

A pretraining run can end with healthy-looking losses and still give an encoder that
fine-tunes worse than a random start of the same sizes (a collapsed encoder, or a sentence
head that memorized its training pairs). The check fine-tunes the run on one task folder
(written by `albert-data task`) from itself and from a random start, `num_seeds` seeds of
`train_steps` steps each, with the downstream suite's small-model recipe
(`albert_lab.comparison.seed_loop`); the gain is paired by seed, on the test split when the
folder has its labels, with a 95% interval (`albert_lab.comparison.gain`). The result goes
to `downstream_check.json` in the run folder, and a warning is printed when the pretrained
start is no better, or when the comparison failed because the random start got stuck at the
constant answer on some seed. The fine-tuning runs live in
`<model_dir>/downstream_check/<start>/seed<k>`, so a rerun finds them finished.
"""

from __future__ import annotations

import dataclasses
import json
import os

from albert_lab.comparison.gain import Comparison, compare_starts, split_scores
from albert_lab.comparison.recipes import SMALL_MODEL, SMALL_MODEL_RECIPE
from albert_lab.comparison.seed_loop import SeedLoop, raise_first_error, run_seed_loops
from albert_lab.comparison.starts import STARTS, folder_task, start_overrides
from albert_tf.config.pretraining import load_pretrain_config
from albert_tf.config.schema import require_positive
from albert_tf.io.files import atomic_write_bytes

RESULT_FILE = "downstream_check.json"


@dataclasses.dataclass(frozen=True)
class CheckConfig:
    """What the check fine-tunes.

    Attributes:
        task_dir: a task folder `albert-data task` wrote (e.g. bbc-news).
        train_steps: fine-tuning steps of each start (the small-model recipe otherwise).
        seed: the first fine-tuning seed; both starts run the same seeds.
        num_seeds: seeds per start (`seed`, `seed + 1`, ...): the gain is paired by seed
            and its 95% interval needs two or more.
    """

    task_dir: str
    train_steps: int = 300
    seed: int = 1
    num_seeds: int = 3

    def __post_init__(self):
        require_positive("check", self, ("train_steps", "num_seeds"))

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(range(self.seed, self.seed + self.num_seeds))


@dataclasses.dataclass(frozen=True)
class DownstreamCheck:
    """The two starts' scores on one task, seed by seed, and their comparison."""

    task_dir: str
    metric: str
    train_steps: int
    seeds: dict  # start -> seed -> record (`albert_lab.comparison.seed_loop.seed_record`)
    comparison: Comparison

    def mean(self, start: str) -> float:
        scores = split_scores(self.seeds[start], self.comparison.split)
        return sum(scores.values()) / len(scores)

    def summary(self) -> str:
        name = os.path.basename(os.path.normpath(self.task_dir))
        found = self.comparison
        interval = (f" [{100 * found.low:+.1f}, {100 * found.high:+.1f}] (95%, paired by seed)"
                    if found.paired_seeds > 1 else " (one seed: no interval)")
        seeds = f"{found.paired_seeds} seed{'s' * (found.paired_seeds > 1)}"
        return (f"downstream check on {name} ({self.train_steps} fine-tuning steps, {seeds}): "
                f"{found.split} {self.metric} "
                f"{100 * self.mean('pretrained'):.1f} from this run, "
                f"{100 * self.mean('random'):.1f} from a random start "
                f"({100 * found.gain:+.1f} points{interval})")

    def warning(self) -> str | None:
        found = self.comparison
        if found.verdict == "failed":
            return (f"warning: the comparison failed: the random start stuck at the constant "
                    f"answer on seed {', '.join(found.stuck_random)}, so it is no reference "
                    f"and no gain can be read from it")
        if found.stuck_pretrained:
            return (f"warning: the pretrained start stuck at the constant answer on seed "
                    f"{', '.join(found.stuck_pretrained)}: pretraining has not made a "
                    f"better model")
        if found.gain > 0:
            return None
        return ("warning: the pretrained encoder is no better a start than a random one of "
                "the same sizes on this task: pretraining has not made a better model (see "
                "the held-out accuracies and the representation spread above)")

    def to_dict(self) -> dict:
        return {"task_dir": self.task_dir, "metric": self.metric,
                "train_steps": self.train_steps, "recipe": SMALL_MODEL, "seeds": self.seeds,
                "means": {start: self.mean(start) for start in STARTS},
                **self.comparison.to_dict()}


def missing_task_note(task_dir: str) -> str:
    name = os.path.basename(os.path.normpath(task_dir))
    return (f"no task folder at {task_dir} (make it with `albert-data task --source {name} "
            f"--output {task_dir}`)")


def run_downstream_check(run_dir: str, check: CheckConfig) -> DownstreamCheck:
    """Fine-tunes pretraining run `run_dir` and a random start of its sizes as `check` says,
    and writes `downstream_check.json` into the run folder."""
    if not os.path.isdir(check.task_dir):
        raise FileNotFoundError(missing_task_note(check.task_dir))
    run = load_pretrain_config(os.path.join(run_dir, "config.yaml"))
    task = folder_task(check.task_dir)
    folder = os.path.join(run_dir, "downstream_check")
    shared = [*SMALL_MODEL_RECIPE, f"train.train_steps={check.train_steps}",
              f"train.eval_every_steps={check.train_steps}",
              f"optimizer.warmup_steps={min(60, check.train_steps // 10)}",
              f"model.spm_model={os.path.join(run_dir, run.tokenizer.spm_model)}",
              f"data.data_dir={check.task_dir}", f"data.max_seq_length={run.data.max_seq_length}"]
    loops = {start: SeedLoop(task, [*shared, *start_overrides(
        run_dir, start, os.path.join(folder, "random"), run.model.to_dict())], check.seeds,
        os.path.join(folder, start)) for start in STARTS}
    run_seed_loops(list(loops.values()))  # both starts' seeds side by side
    raise_first_error(list(loops.values()))
    seeds = {start: loop.records for start, loop in loops.items()}
    metric = next(iter(seeds["pretrained"].values()))["metric"]
    result = DownstreamCheck(task_dir=check.task_dir, metric=metric,
                             train_steps=check.train_steps, seeds=seeds,
                             comparison=compare_starts(seeds["pretrained"], seeds["random"]))
    atomic_write_bytes(os.path.join(run_dir, RESULT_FILE),
                       json.dumps({**result.to_dict(), "task": task}, indent=1).encode())
    return result
