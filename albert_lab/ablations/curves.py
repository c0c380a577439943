"""Training curves of a pretraining run, read back from the TensorBoard events it wrote.

The events cover every process that worked on the run (a resumed run appends new files), so
the curves, the training time and the throughput describe the whole run, not its last part.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import tensorflow as tf

TRAIN_LOSS = ("train", "batch_loss")
EVAL_LOSS = ("validation", "evaluation_loss_vs_iterations")
STEPS_PER_SECOND = ("train", "steps_per_second")
EXAMPLES_PER_SECOND = ("train", "examples_per_second")
CPU_USE = ("train", "cpu_use")


def _value(summary_value) -> float:
    if summary_value.HasField("tensor"):
        return float(tf.make_ndarray(summary_value.tensor))
    return float(summary_value.simple_value)


def read_scalars(log_dir: str, run: str, tag: str) -> list[tuple[int, float]]:
    """[(step, value)] of one scalar of TensorBoard run `run`, by step; a step logged twice
    (a resumed run repeating a step) keeps its last value."""
    values: dict[int, float] = {}
    for path in sorted(glob.glob(os.path.join(log_dir, run, "events.out.tfevents.*"))):
        for record in tf.data.TFRecordDataset(path):
            event = tf.compat.v1.Event.FromString(record.numpy())
            for summary_value in event.summary.value:
                if summary_value.tag == tag:
                    values[int(event.step)] = _value(summary_value)
    return sorted(values.items())


# A logged interval slower than this fraction of the run's median rate was not training: the
# process was stopped (a SIGSTOP, a suspended machine) or starved by another job.
STALLED_FRACTION = 1 / 3


def training_seconds(steps_per_second: list[tuple[int, float]], final_step: int = 0) -> float:
    """Seconds spent in training steps: each logged interval's steps over its rate.

    The first interval of every process (tracing and XLA compilation) is not logged, so its
    steps are counted at the rate of the interval after it; compilation time is left out.
    The steps after the last logged one, up to `final_step` (the run ends between two logs),
    count at the last logged rate. An interval whose rate is below `STALLED_FRACTION` of
    the run's median rate counts at the median rate, so a run paused for an hour in one
    interval is not an hour longer.
    """
    rates = [rate for _, rate in steps_per_second if rate > 0]
    if not rates:
        return 0.0
    median = float(np.median(rates))
    seconds, previous, last_rate = 0.0, 0, median
    for step, rate in steps_per_second:
        if rate > 0:
            last_rate = rate if rate >= STALLED_FRACTION * median else median
            seconds += (step - previous) / last_rate
        previous = step
    return seconds + max(final_step - previous, 0) / last_rate


def interval_means(running_means: list[tuple[int, float]], steps_per_epoch: int
                   ) -> list[tuple[int, float]]:
    """Keras logs a batch metric as its mean since the epoch began; this recovers the mean
    over each logged interval, so a curve has no jump at epoch starts.

    (A run resumed mid-epoch restarts its means at the resumed step; the intervals of that
    epoch after the resume are then approximate.)
    """
    intervals = []
    previous_total, previous_count, previous_epoch = 0.0, 0, None
    for step, mean in running_means:
        epoch = (step - 1) // steps_per_epoch
        count = step - epoch * steps_per_epoch
        if epoch != previous_epoch or count <= previous_count:
            previous_total, previous_count = 0.0, 0
        total = mean * count
        intervals.append((step, (total - previous_total) / (count - previous_count)))
        previous_total, previous_count, previous_epoch = total, count, epoch
    return intervals


def run_curves(log_dir: str, steps_per_epoch: int, final_step: int) -> dict:
    """{train_loss (per logged interval), eval_loss: [[step, value]], train_seconds (up to
    `final_step`), examples_per_second and cpu_use (medians over the logged intervals;
    cpu_use None for runs logged before it was)}."""
    rates = read_scalars(log_dir, *STEPS_PER_SECOND)
    examples = [value for _, value in read_scalars(log_dir, *EXAMPLES_PER_SECOND)]
    cpu_use = [value for _, value in read_scalars(log_dir, *CPU_USE)]
    train_loss = interval_means(read_scalars(log_dir, *TRAIN_LOSS), steps_per_epoch)
    return {
        "train_loss": [list(point) for point in train_loss],
        "eval_loss": [list(point) for point in read_scalars(log_dir, *EVAL_LOSS)],
        "train_seconds": training_seconds(rates, final_step),
        "examples_per_second": float(np.median(examples)) if examples else None,
        "cpu_use": float(np.median(cpu_use)) if cpu_use else None,
    }
