"""The comparison that refuses a worker differing from the chief, and the peer-loss error, on
hand-made descriptions and errors (the two-process runs are in
tests/albert_tf/training/test_multi_worker_faults.py)."""

import pytest
import tensorflow as tf

from albert_tf.loop import cluster


def description(learning_rate=0.002, checksum="sha256:aa", sizes=(100, 200)):
    return {"config": {"optimizer": {"learning_rate": learning_rate, "type": "adamw"}},
            "tokenizer": {"checksum": checksum, "lower_case": True},
            "shards": {f"shards/train-0000{i}-of-00002.tfrecord": size
                       for i, size in enumerate(sizes)}}


def test_differences_name_each_field_with_both_values():
    chief, worker = description(), description(0.003, "sha256:bb", (100,))
    assert cluster.differences(chief, worker, "worker 1") == [
        "config.optimizer.learning_rate: chief 0.002, worker 1 0.003",
        "shards.shards/train-00001-of-00002.tfrecord: chief 200, worker 1 '(none)'",
        "tokenizer.checksum: chief 'sha256:aa', worker 1 'sha256:bb'",
    ]
    assert cluster.differences(chief, description(), "worker 1") == []


def test_problems_put_a_workers_own_error_first_and_count_replicas_per_worker():
    same, other = description(), description(sizes=(100, 201))
    # Two replicas a worker (two GPUs each): worker 1's descriptions are items 2 and 3.
    found = cluster._problems([same, same, other, other], replicas_per_worker=2)
    assert found == ["worker 1 differs from the chief in 1 field(s): "
                     "shards.shards/train-00001-of-00002.tfrecord: chief 200, worker 1 201"]
    assert cluster._problems([same, same], 1) == []
    failed = cluster._problems([{"error": "data.train_files: no file matches"}, other], 1)
    assert failed == ["the chief (worker 0) could not start: data.train_files: no file matches"]


def test_one_process_runs_its_own_checks_and_keeps_their_errors():
    strategy = tf.distribute.get_strategy()
    assert cluster.agree_with_chief(strategy, lambda: 5, lambda _: {}) == 5

    def failing():
        raise ValueError("field 'train.global_batch_size' (30) must be a multiple of 4")
    with pytest.raises(ValueError, match="global_batch_size"):
        cluster.agree_with_chief(strategy, failing, lambda _: {})


def test_peer_errors_pass_through_a_single_process_run():
    error = tf.errors.UnavailableError(None, None, "Graph execution error:\n/job:worker/"
                                       "replica:0/task:1\nThe tasks have crashed.")
    with pytest.raises(tf.errors.UnavailableError):
        with cluster.peer_loss_reported(tf.distribute.get_strategy(), "run/backup"):
            raise error
    assert cluster._what_tensorflow_said(error) == (
        "TensorFlow: UnavailableError from /job:worker/replica:0/task:1: The tasks have "
        "crashed.")
