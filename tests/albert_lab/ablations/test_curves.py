"""Training time and curves read from a run's TensorBoard logs (`albert_lab.ablations.curves`),
by hand."""

from __future__ import annotations

import pytest

from albert_lab.ablations.curves import interval_means, read_scalars, training_seconds
from albert_tf.io.summaries import scalars_at


def test_training_seconds_add_each_logged_interval_at_its_rate():
    # Steps 0-10 at the first logged rate (compilation left out), then 10-30 at 4/s.
    assert training_seconds([(10, 5.0), (30, 4.0)]) == pytest.approx(10 / 5 + 20 / 4)
    assert training_seconds([]) == 0.0
    # A rate below a third of the median (a stopped process) counts at the median: steps
    # 30-50 at 4/s, not at 0.01/s; a rate of half the median is real and kept.
    assert training_seconds([(10, 5.0), (30, 4.0), (50, 0.01), (70, 2.0)]) == pytest.approx(
        10 / 5 + 20 / 4 + 20 / 3.0 + 20 / 2)
    # A run that ends between two logs: its last 15 steps at the last logged rate, 4/s;
    # after a stalled last interval, at the median (4/s of 5, 4 and 0.01).
    assert training_seconds([(10, 5.0), (30, 4.0)], final_step=45) == pytest.approx(
        10 / 5 + 20 / 4 + 15 / 4)
    assert training_seconds([(10, 5.0), (30, 4.0), (50, 0.01)], final_step=60) == \
        pytest.approx(10 / 5 + 20 / 4 + 20 / 4 + 10 / 4)
    assert training_seconds([(10, 5.0)], final_step=10) == pytest.approx(10 / 5)


def test_running_means_become_interval_means_across_epoch_starts():
    # Epochs of 4 steps, logged every 2: losses 4, 2 | 3, 1 | 6, 4 per interval.
    running = [(2, 4.0), (4, 3.0), (6, 3.0), (8, 2.0), (10, 6.0), (12, 5.0)]
    assert interval_means(running, 4) == [(2, 4.0), (4, 2.0), (6, 3.0), (8, 1.0), (10, 6.0),
                                          (12, 4.0)]


def test_scalars_of_a_resumed_run_keep_the_last_value_of_a_repeated_step(tmp_path):
    import tensorflow as tf
    for values in ({5: 3.0, 10: 2.0}, {10: 1.5, 15: 1.0}):  # two processes, step 10 twice
        writer = tf.summary.create_file_writer(str(tmp_path / "train"))
        for step, value in values.items():
            with scalars_at(writer, step):  # as the runs' callbacks write
                tf.summary.scalar("batch_loss", value)
        writer.close()
    assert read_scalars(str(tmp_path), "train", "batch_loss") == [(5, 3.0), (10, 1.5),
                                                                   (15, 1.0)]
