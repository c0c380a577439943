"""A sentence head whose output starts at the training labels' prior instead of at zero.

A fresh head's bias is zero: before its first step a regression head predicts 0 for every
input (while lee-pairs' and STS-B's scores lie between 1 and 5), and a classifier gives
every class the same probability. The first updates then move every example's output the
same way, toward the prior, and all of that pressure goes through the encoder too: it is
pushed toward one output for every input. Started at the prior (the training labels' mean;
the log of each class's share), the head already gives the constant answer the loss asks for
first, and from the first step the gradients are about what tells examples apart. The same
idea starts the pretraining's masked-LM output bias at the unigram prior.

    bias = prior_bias(train_labels, num_outputs=1)      # regression: [mean]
    start_head_at_prior(model, train_labels)            # AlbertClassifier only
"""

from __future__ import annotations

import numpy as np

from albert_tf.config import ConfigError

ABSENT_CLASS_COUNT = 0.5  # a class that training never shows still gets a finite log share


def prior_bias(labels: np.ndarray, num_outputs: int) -> np.ndarray:
    """The head's starting bias, float32 `(num_outputs,)`.

    Args:
        labels: the training split's labels, `(examples,)`: floats for regression
            (`num_outputs` 1), class indices in `[0, num_outputs)` otherwise.
        num_outputs: 1 for regression, else the number of classes.

    Returns:
        `[mean of labels]` for regression; for classification the log of each class's share
        of the labels (so the softmax of the bias is the class frequencies), a class with no
        example counted as `ABSENT_CLASS_COUNT` examples.
    """
    labels = np.asarray(labels).reshape(-1)
    if labels.size == 0:
        raise ValueError("no training labels to take a prior from")
    if num_outputs == 1:
        return np.array([labels.astype(np.float64).mean()], np.float32)
    classes = labels.astype(np.int64)
    if classes.min() < 0 or classes.max() >= num_outputs:
        raise ValueError(f"class indices must lie in [0, {num_outputs}), got "
                         f"{classes.min()}..{classes.max()}")
    counts = np.bincount(classes, minlength=num_outputs).astype(np.float64)
    counts[counts == 0] = ABSENT_CLASS_COUNT
    return np.log(counts / counts.sum()).astype(np.float32)


def start_head_at_prior(model, labels: np.ndarray) -> np.ndarray:
    """Sets the bias of `model`'s head (an `AlbertClassifier`, built) to `prior_bias` of
    `labels` and returns it.

    Raises:
        ConfigError: the model has no sentence head (span and multiple-choice tasks, whose
            outputs have no label prior).
    """
    from albert_tf.models.task_models import AlbertClassifier

    if not isinstance(model, AlbertClassifier):
        raise ConfigError(f"model.head_bias_prior: only sentence classification and "
                          f"regression heads start at a label prior; this task's model is a "
                          f"{type(model).__name__}")
    bias = prior_bias(labels, model.num_classes)
    model.head.dense.bias.assign(bias.astype(model.head.dense.bias.dtype.as_numpy_dtype))
    return bias
