"""The head's bias at the training labels' prior: before any step, a classifier's
probabilities are the class shares and a regression head predicts the labels' mean."""

import numpy as np
import pytest
from helpers import random_inputs, randomize_weights

from albert_tf.config import ConfigError
from albert_tf.finetuning.head_prior import ABSENT_CLASS_COUNT, prior_bias, start_head_at_prior
from albert_tf.models.task_models import AlbertClassifier, AlbertSpanLabeler


def test_the_prior_is_the_mean_or_the_log_of_each_class_share():
    np.testing.assert_allclose(prior_bias(np.array([1.0, 2.0, 4.5]), 1), [2.5])
    shares = [3 / 6, 1 / 6, 2 / 6]
    np.testing.assert_allclose(prior_bias(np.array([0, 0, 1, 2, 0, 2]), 3), np.log(shares),
                               rtol=1e-6)
    # A class training never shows gets half an example, not log(0).
    absent = prior_bias(np.array([0, 0, 0, 1]), 3)
    total = 4 + ABSENT_CLASS_COUNT
    np.testing.assert_allclose(absent, np.log([3 / total, 1 / total, 0.5 / total]), rtol=1e-6)
    with pytest.raises(ValueError, match=r"class indices must lie in \[0, 2\), got 0..2"):
        prior_bias(np.array([0, 1, 2]), 2)
    with pytest.raises(ValueError, match="no training labels"):
        prior_bias(np.array([]), 1)


@pytest.mark.parametrize("num_classes, labels", [
    (1, np.array([1.0, 1.5, 3.0, 1.2, 4.8], np.float32)),
    (4, np.array([0, 0, 0, 0, 0, 0, 1, 2, 2, 3])),
])
def test_a_started_head_answers_the_prior_while_its_kernel_reads_nothing(
        tiny_config, num_classes, labels):
    model = AlbertClassifier(tiny_config, num_classes=num_classes, dropout_rate=0.0)
    inputs = random_inputs([10, 7, 12], 12, tiny_config.vocab_size, seed=3)
    model(inputs)
    randomize_weights(model, seed=2)
    start_head_at_prior(model, labels)
    # With the head's kernel at zero, its output is its bias alone, for every input.
    model.head.dense.kernel.assign(np.zeros(model.head.dense.kernel.shape, np.float32))
    outputs = model(inputs, training=False)
    if num_classes == 1:
        np.testing.assert_allclose(outputs["predictions"].numpy(), [labels.mean()] * 3,
                                   rtol=1e-6)
    else:
        shares = np.bincount(labels, minlength=num_classes) / len(labels)
        np.testing.assert_allclose(outputs["probabilities"].numpy(), [shares] * 3, rtol=1e-5)


def test_a_model_without_a_sentence_head_is_refused(tiny_config):
    with pytest.raises(ConfigError, match="model.head_bias_prior: only sentence"):
        start_head_at_prior(AlbertSpanLabeler(tiny_config), np.array([0, 1]))
