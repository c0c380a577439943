"""The throughput scalars of the training loops (`albert_tf.loop.step_callbacks`), on clocks
the test sets by hand."""

from __future__ import annotations

import numpy as np
import tensorflow as tf
import tf_keras

from albert_tf.loop import step_callbacks


class _Clocks:
    """A wall clock that advances 2 s at each batch's end and a process CPU clock that
    advances 1.5 s for each CPU the process may use: a run that holds three quarters of the
    machine and takes 2 s a step."""

    def __init__(self, cpus: int):
        self.cpus, self.wall, self.cpu = cpus, 0.0, 0.0

    def perf_counter(self) -> float:
        self.wall += 2.0
        return self.wall

    def process_time(self) -> float:
        self.cpu += 1.5 * self.cpus
        return self.cpu


def test_training_scalars_log_steps_examples_and_the_share_of_the_cpus_used(tmp_path,
                                                                            monkeypatch):
    from albert_lab.ablations.curves import read_scalars, run_curves
    clocks = _Clocks(step_callbacks.usable_cpus())
    monkeypatch.setattr(step_callbacks, "time", clocks)
    model = tf_keras.Sequential([tf_keras.layers.Dense(1, input_shape=(3,))])
    model.compile(tf_keras.optimizers.SGD(0.01), "mse")
    data = tf.data.Dataset.from_tensor_slices((np.ones((40, 3), np.float32),
                                               np.ones((40, 1), np.float32))).batch(4)
    scalars = step_callbacks.TrainingScalars(str(tmp_path), global_batch_size=4, every_steps=3)
    model.fit(data, epochs=1, verbose=0, callbacks=[scalars])
    # The first batch (step 1) starts the clocks; writes follow at steps 4, 7 and 10, each
    # 3 batches = 6 s of wall time: 0.5 steps/s, 2 examples/s, CPU use 1.5 / 2 = 0.75.
    assert read_scalars(str(tmp_path), "train", "steps_per_second") == [
        (4, 0.5), (7, 0.5), (10, 0.5)]
    assert [value for _, value in read_scalars(str(tmp_path), "train", "cpu_use")] == \
        [0.75] * 3
    curves = run_curves(str(tmp_path), steps_per_epoch=10, final_step=10)
    assert curves["examples_per_second"] == 2.0 and curves["cpu_use"] == 0.75
    assert curves["train_seconds"] == 10 / 0.5  # the first step counts at the logged rate


def test_scalars_are_written_after_a_fit_that_raised_left_tensorboards_state_behind(tmp_path):
    from albert_lab.ablations.curves import read_scalars

    class _Fails(tf_keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 2:
                raise RuntimeError("a training that stops with an error")  # after step 3

    model = tf_keras.Sequential([tf_keras.layers.Dense(1, input_shape=(3,))])
    model.compile(tf_keras.optimizers.SGD(0.01), "mse")
    data = tf.data.Dataset.from_tensor_slices((np.ones((40, 3), np.float32),
                                               np.ones((40, 1), np.float32))).batch(4)
    tensorboard = tf_keras.callbacks.TensorBoard(str(tmp_path / "keras"), update_freq=100)
    try:
        model.fit(data, epochs=1, verbose=0, callbacks=[tensorboard, _Fails()])
    except RuntimeError:
        pass  # TensorBoard's record_if(step % 100 == 0) is left entered on this thread
    try:
        scalars = step_callbacks.TrainingScalars(str(tmp_path / "ours"), global_batch_size=4,
                                                 every_steps=3)
        model.fit(data, epochs=1, verbose=0, callbacks=[scalars])
        assert [step for step, _ in read_scalars(str(tmp_path / "ours"), "train",
                                                 "steps_per_second")] == [7, 10, 13]
    finally:
        tensorboard._pop_writer()  # leave the thread as the tests before found it
