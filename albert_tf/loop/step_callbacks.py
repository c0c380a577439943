"""Keras callbacks of the training loops (pretraining, and fine-tuning's scalars):
step-numbered checkpoints and TensorBoard scalars that Keras does not log itself (learning
rate, throughput, and the share of the CPUs the process used, which says whether the
throughput was measured alone or beside other work)."""

from __future__ import annotations

import os
import time

import tensorflow as tf
import tf_keras

from albert_tf.config.run_folder import CHECKPOINT_PREFIX
from albert_tf.io.machine import usable_cpus
from albert_tf.io.summaries import scalars_at


def learning_rate_at(optimizer, step) -> float:
    """The optimizer's learning rate at `step` (schedules are evaluated, constants read)."""
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # loss-scale wrapper
    rate = optimizer.learning_rate
    if isinstance(rate, tf_keras.optimizers.schedules.LearningRateSchedule):
        rate = rate(step)
    return float(tf.convert_to_tensor(rate))


class StepCheckpoint(tf_keras.callbacks.Callback):
    """At every epoch end, saves model and optimizer to `directory/ckpt-<step>`, keeping the
    last `max_to_keep`.

    Under MultiWorkerMirroredStrategy every worker must take part in a save; the workers other
    than the chief write to a scratch folder that is deleted afterwards.
    """

    def __init__(self, directory: str, max_to_keep: int, is_chief: bool, worker_id: int = 0):
        super().__init__()
        self.directory = directory
        self.max_to_keep = max_to_keep
        self.is_chief = is_chief
        self.worker_id = worker_id
        self._manager = None

    def _write_directory(self) -> str:
        if self.is_chief:
            return self.directory
        return os.path.join(self.directory, f".worker_{self.worker_id}_scratch")

    def on_train_begin(self, logs=None):
        checkpoint = tf.train.Checkpoint(model=self.model)
        self._manager = tf.train.CheckpointManager(
            checkpoint, self._write_directory(), max_to_keep=self.max_to_keep,
            checkpoint_name=CHECKPOINT_PREFIX)

    def on_epoch_end(self, epoch, logs=None):
        self._manager.save(checkpoint_number=int(self.model.optimizer.iterations.numpy()))
        if not self.is_chief:
            tf.io.gfile.rmtree(self._write_directory())


class TrainingScalars(tf_keras.callbacks.Callback):
    """Every `every_steps` steps, writes the learning rate, examples/s, steps/s and
    `cpu_use` to TensorBoard (`log_dir`, run `train`), at the optimizer's step count.

    `cpu_use` is the process's CPU time over the interval's wall time times the CPUs it may
    run on: near its usual level when the run had the machine to itself, and lower when
    other jobs took a share of the cores (on an accelerator it says how busy the host was)."""

    def __init__(self, log_dir: str, global_batch_size: int, every_steps: int,
                 enabled: bool = True):
        super().__init__()
        self.log_dir = log_dir
        self.global_batch_size = global_batch_size
        self.every_steps = every_steps
        self.enabled = enabled
        self._writer = None
        self._last = None  # (wall time, step, process CPU time) of the last write
        self._cpus = usable_cpus()

    def on_train_begin(self, logs=None):
        if self.enabled:
            self._writer = tf.summary.create_file_writer(os.path.join(self.log_dir, "train"))

    def on_train_batch_end(self, batch, logs=None):
        if self._writer is None:
            return
        step = int(self.model.optimizer.iterations.numpy())
        now, cpu_now = time.perf_counter(), time.process_time()
        if self._last is None:  # the first call includes tracing; start timing after it
            self._last = (now, step, cpu_now)
            return
        if step - self._last[1] < self.every_steps:
            return
        seconds = now - self._last[0]
        steps_per_second = (step - self._last[1]) / seconds
        with scalars_at(self._writer, step):
            tf.summary.scalar("learning_rate", learning_rate_at(self.model.optimizer, step))
            tf.summary.scalar("steps_per_second", steps_per_second)
            tf.summary.scalar("examples_per_second", steps_per_second * self.global_batch_size)
            tf.summary.scalar("cpu_use", (cpu_now - self._last[2]) / (seconds * self._cpus))
        self._last = (now, step, cpu_now)

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer.close()
            self._writer = None
