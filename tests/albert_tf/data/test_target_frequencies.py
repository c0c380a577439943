"""Masked-LM target counts from shards and their log prior, against hand-computed values."""

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.data.target_frequencies import log_prior, masked_target_counts
from albert_tf.data.validation import DataError

PREDICTIONS = 3


def _example(ids, weights):
    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    features = {"masked_lm_ids": ints(ids), "masked_lm_positions": ints([1, 2, 3]),
                "masked_lm_weights": tf.train.Feature(
                    float_list=tf.train.FloatList(value=weights))}
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def _write(path, examples):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for ids, weights in examples:
            writer.write(_example(ids, weights))
    return str(path)


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    root = tmp_path_factory.mktemp("targets")
    # Padding predictions (weight 0) carry id 0 and must not count.
    _write(root / "a.tfrecord", [([7, 7, 0], [1, 1, 0]), ([5, 9, 0], [1, 1, 0])])
    _write(root / "b.tfrecord", [([9, 9, 9], [1, 1, 1])])
    return str(root / "*.tfrecord")


def test_counts_weighted_targets_of_every_file(shards):
    counts, examples = masked_target_counts([shards], PREDICTIONS, 10, max_examples=100)
    assert examples == 3
    expected = np.zeros(10)
    expected[[5, 7, 9]] = [1, 2, 4]
    np.testing.assert_array_equal(counts, expected)


def test_max_examples_bounds_the_read(shards):
    # Files are interleaved: the first two examples are a's first and b's first.
    counts, examples = masked_target_counts([shards], PREDICTIONS, 10, max_examples=2)
    assert examples == 2 and counts.sum() == 5 and counts[7] == 2 and counts[9] == 3


def test_a_target_outside_the_vocabulary_is_an_error(shards):
    with pytest.raises(DataError, match="target id 9 .* vocabulary of 8 pieces"):
        masked_target_counts([shards], PREDICTIONS, 8, max_examples=100)


def test_log_prior_by_hand():
    prior = log_prior(np.array([0.0, 1.0, 3.0]))  # add-one: 1, 2, 4 of 7
    logs = np.log(np.array([1, 2, 4]) / 7)
    np.testing.assert_allclose(prior, logs - logs.mean(), rtol=1e-6)
    assert prior.dtype == np.float32 and abs(prior.mean()) < 1e-6
    # Softmax of the prior is the smoothed frequency.
    np.testing.assert_allclose(np.exp(prior) / np.exp(prior).sum(), [1 / 7, 2 / 7, 4 / 7],
                               rtol=1e-6)
