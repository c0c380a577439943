"""The training and evaluation steps every model of this package shares (the pretrainer and
the fine-tuning task models): written once, with the loss shares of the global batch,
gradient accumulation and metrics kept as sums.

A subclass says what its step is made of:

    loss_denominators(features) -> {name: global denominator over the step's batch}
    loss_and_statistics(features, denominators, training) -> (loss share, {name: sum})
    metric_fractions -> {metric name: (numerator statistic, weight statistic)}

and `StepModel` does the rest: one optimizer update per step (over N micro-batches with
`gradient_accumulation_steps: N`, `albert_tf.models.accumulation`), and the metrics. `loss`
is the objective minimized, averaged over steps; every other metric is a weighted mean over
all examples seen since the last reset, on all replicas.
"""

from __future__ import annotations

from typing import Mapping

import tensorflow as tf
import tf_keras

from albert_tf.config import ConfigError
from albert_tf.models.accumulation import accumulate


def global_sum(value: tf.Tensor) -> tf.Tensor:
    """Sum of `value` over all replicas of the current step (itself outside a strategy)."""
    context = tf.distribute.get_replica_context()
    if context is None:  # cross-replica context: the value is already global
        return value
    return context.all_reduce(tf.distribute.ReduceOp.SUM, value)


def correct_predictions(logits: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
    """1.0 where the arg-max of `logits` (last axis) is `labels`, else 0.0 (labels of the
    logits' leading shape, any integer dtype)."""
    predicted = tf.argmax(logits, -1, output_type=tf.int32)
    return tf.cast(tf.equal(predicted, tf.cast(labels, tf.int32)), tf.float32)


class StepModel(tf_keras.Model):
    """A tf_keras model whose `train_step` and `test_step` are the package's (see the module
    docstring).

    Args:
        metric_names: the metrics besides `loss`, keys of `metric_fractions`.
        gradient_accumulation_steps: N micro-batches per update (1: none).
    """

    def __init__(self, metric_names: tuple[str, ...] = (), gradient_accumulation_steps: int = 1,
                 **kwargs):
        super().__init__(**kwargs)
        if int(gradient_accumulation_steps) < 1:
            raise ConfigError(f"gradient_accumulation_steps must be >= 1, got "
                              f"{gradient_accumulation_steps}")
        self.gradient_accumulation_steps = int(gradient_accumulation_steps)
        self._trackers = {name: tf_keras.metrics.Mean(name)
                          for name in ("loss", *metric_names)}
        # The trackers' results are global already (all replicas' sums); the step reports the
        # first replica's copy, never a sum over replicas.
        self.distribute_reduction_method = "first"

    # -- what a subclass defines

    metric_fractions: Mapping[str, tuple[str, str]] = {}

    def loss_denominators(self, features) -> dict[str, tf.Tensor]:
        raise NotImplementedError

    def loss_and_statistics(self, features, denominators, training):
        raise NotImplementedError

    # -- the steps

    def train_step(self, features):
        denominators = self.loss_denominators(features)
        if self.gradient_accumulation_steps == 1:
            with tf.GradientTape() as tape:
                loss, sums = self.loss_and_statistics(features, denominators, training=True)
            if hasattr(self.optimizer, "compute_gradients"):
                # A LossScaleOptimizer's scales the loss and unscales the gradients.
                self._apply_gradients(self.optimizer.compute_gradients(
                    loss, self.trainable_variables, tape=tape))
            else:  # a legacy tf_keras optimizer (Model Garden's LAMB)
                self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
        else:
            gradients, loss, sums = accumulate(
                self, features, self.gradient_accumulation_steps,
                lambda piece: self.loss_and_statistics(piece, denominators, training=True))
            self._apply_gradients(zip(gradients, self.trainable_variables))
        return self._update_metrics(sums, loss)

    def _apply_gradients(self, gradients_and_variables) -> None:
        """One update of the variables the loss reaches. The others (the pooler when no
        sentence objective is trained) are left out here, not warned about at every trace."""
        self.optimizer.apply_gradients(
            [(gradient, variable) for gradient, variable in gradients_and_variables
             if gradient is not None])

    def test_step(self, features):
        loss, sums = self.loss_and_statistics(features, self.loss_denominators(features),
                                              training=False)
        return self._update_metrics(sums, loss)

    def _update_metrics(self, sums, loss) -> dict[str, tf.Tensor]:
        # Each of the n replicas holds its share of the step's loss. A mean is taken over all
        # replicas' entries (sum of value x weight / sum of weights): entering n x share with
        # weight 1/n makes a step weigh 1 and count the sum of the shares.
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        self._trackers["loss"].update_state(loss * replicas, sample_weight=1.0 / replicas)
        # A mean's state is (sum of value x weight, sum of weights): enter the batch's sums.
        for metric, (numerator, weight) in self.metric_fractions.items():
            if metric in self._trackers and weight in sums:
                self._trackers[metric].update_state(
                    tf.math.divide_no_nan(sums[numerator], sums[weight]),
                    sample_weight=sums[weight])
        return {name: tracker.result() for name, tracker in self._trackers.items()}

    @property
    def metrics(self):
        return list(self._trackers.values())
