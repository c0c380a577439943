"""Backups a killed run resumes from: Keras's BackupAndRestore, and the step it resumes at.

`StepBackup` is tf_keras's `BackupAndRestore` with one change. tf_keras records the position
of a backup in `on_train_batch_begin`, as the step the last `train_function` call *began*
at; the weights it saves are those after the call *ended*. With `steps_per_execution` k > 1
a call runs k steps, so the recorded position is k - 1 steps behind the weights: a resumed
run repeats those k - 1 steps (on the batches after the recorded position) and its step
counter, the learning-rate schedule with it, ends k - 1 steps past `train_steps` (a 1,500
step run resumed once with k = 20 ended at step 1,519). `StepBackup` records the step the
call ended at, which is where the saved weights are. With k = 1 the two are the same.
A backup whose weights hold NaN or infinity is refused when it is restored.
"""

from __future__ import annotations

import os

import tensorflow as tf
import tf_keras

from albert_tf.loop.finite import check_finite_variables


class StepBackup(tf_keras.callbacks.BackupAndRestore):
    """`tf_keras.callbacks.BackupAndRestore` that records the step the backed-up weights
    are at, also when each `train_function` call runs several steps (module docstring).
    Same arguments; `save_freq` counts `train_function` calls, as Keras's does."""

    def on_train_begin(self, logs=None):
        restoring = tf.io.gfile.isdir(os.path.join(self.backup_dir, "chief"))  # backup_step's
        super().on_train_begin(logs)
        if restoring and self.model.built:  # (an unbuilt model restores as it builds)
            check_finite_variables(self.model.weights, f"the backup in {self.backup_dir}")

    def on_train_batch_begin(self, batch, logs=None):
        """Records nothing: the position is recorded when the call has ended."""

    def on_train_batch_end(self, batch, logs=None):
        # Keras passes the last step the call ran; the parent's begin hook stores its
        # argument as the position (and skips ParameterServerStrategy, as Keras does).
        super().on_train_batch_begin(batch, logs)
        super().on_train_batch_end(batch, logs)


def _read_backup_counter(reader, suffix: str) -> int:
    keys = [key for key in reader.get_variable_to_shape_map() if key.startswith(suffix)]
    return int(reader.get_tensor(keys[0])) if keys else -1


def backup_step(backup_dir: str, steps_per_epoch: int) -> int:
    """Steps completed by the run whose `StepBackup` state is in `backup_dir` (0 without
    one): the data position a resumed run starts from.

    tf_keras has no public API for this: the callback restores the counters into the model
    only once `fit` has started, after the input pipeline is made. So this reads its on-disk
    layout (the `chief` folder, the `ckpt_saved_epoch` / `ckpt_saved_batch` counters);
    `tests/albert_tf/loop/test_backup.py` pins that layout, and that `StepBackup` records the
    step its weights are at, against the installed tf_keras.
    """
    # Keras keeps the state every worker restores from in `<backup_dir>/chief`.
    state_dir = os.path.join(backup_dir, "chief")
    latest = tf.train.latest_checkpoint(state_dir) if tf.io.gfile.isdir(state_dir) else None
    if latest is None:
        return 0
    reader = tf.train.load_checkpoint(latest)
    epoch = _read_backup_counter(reader, "ckpt_saved_epoch")
    batch = _read_backup_counter(reader, "ckpt_saved_batch")
    if epoch < 0:
        return 0
    if batch < 0:  # saved at an epoch end
        return (epoch + 1) * steps_per_epoch
    return epoch * steps_per_epoch + batch + 1
