"""`StepBackup` and `backup_step`: where a killed fit resumes, against the installed tf_keras."""

import pytest
import tensorflow as tf
import tf_keras

from albert_tf.loop.backup import StepBackup, backup_step

STEPS_PER_EPOCH, EPOCHS = 4, 3


class _StopAfterCalls(tf_keras.callbacks.Callback):
    """Raises after the `calls`-th `train_function` call, as a killed run stops."""

    def __init__(self, calls):
        super().__init__()
        self.calls, self.seen = calls, 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen == self.calls:
            raise RuntimeError("stopped")


class _RecordSteps(tf_keras.callbacks.Callback):
    """The optimizer's step count once the backup is restored, and the (epoch, last step)
    of every call the fit makes."""

    def __init__(self):
        super().__init__()
        self.restored_iterations, self.epoch, self.ends = None, 0, []

    def on_train_begin(self, logs=None):  # runs after StepBackup's, which restores
        self.restored_iterations = int(self.model.optimizer.iterations)

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append((self.epoch, batch))


def _fit(backup_dir, steps_per_execution, save_every_calls, *callbacks):
    """A fit of 3 epochs of 4 steps, backed up every `save_every_calls` calls; returns the
    optimizer."""
    tf_keras.utils.set_random_seed(0)
    model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", steps_per_execution=steps_per_execution)
    data = tf.data.Dataset.from_tensors((tf.ones((2, 3)), tf.ones((2, 1)))).repeat()
    model.fit(data, epochs=EPOCHS, steps_per_epoch=STEPS_PER_EPOCH, verbose=0,
              callbacks=[StepBackup(backup_dir, save_freq=save_every_calls), *callbacks])
    return model.optimizer


@pytest.mark.parametrize("steps_per_execution, save_every_calls, stop_after_calls, steps_done", [
    (1, 1, 7, 7),  # within an epoch, a step per call
    (1, 2, 7, 6),  # backed up every 2 calls: the last backup is after step 6, not 7
    (2, 1, 3, 6),  # within an epoch: the call of steps 4-5 (epoch 1, steps 0-1) ended it
    (2, 1, 4, 8),  # at an epoch's end
])
def test_a_stopped_fit_resumes_at_the_step_its_weights_are_at(
        tmp_path, steps_per_execution, save_every_calls, stop_after_calls, steps_done):
    """tf_keras's own BackupAndRestore records the step a call began at: with two steps a
    call, it resumes one step early and ends one step past the last (13 of 12)."""
    backup = str(tmp_path / "backup")
    assert backup_step(backup, STEPS_PER_EPOCH) == 0
    with pytest.raises(RuntimeError, match="stopped"):
        _fit(backup, steps_per_execution, save_every_calls, _StopAfterCalls(stop_after_calls))
    assert backup_step(backup, STEPS_PER_EPOCH) == steps_done

    recorder = _RecordSteps()
    optimizer = _fit(backup, steps_per_execution, save_every_calls, recorder)
    # The restored weights are after `steps_done` steps; the resumed fit runs exactly the
    # steps the stopped one had not, starting where it stopped.
    assert recorder.restored_iterations == steps_done
    assert int(optimizer.iterations) == EPOCHS * STEPS_PER_EPOCH
    first_epoch, first_end = recorder.ends[0]
    assert first_epoch * STEPS_PER_EPOCH + first_end + 1 == steps_done + steps_per_execution
