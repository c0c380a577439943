"""Gradient accumulation inside one training step: the step's batch in N micro-batches.

A Keras step receives the whole batch one update is for (`global_batch_size` over all
replicas, as without accumulation) and runs forward and backward on one N-th of it at a time
in a `tf.while_loop`, so activations are held for one micro-batch only. The loss
denominators (the MLM weights, the example count) are taken from the whole batch first, so
the summed micro-batch gradients are those of the one big batch; the optimizer then applies
them once. One step is still one update: the learning-rate schedule, LAMB's trust ratio and
global-norm clipping see the accumulated gradient, `steps_per_execution`, XLA and the
strategies work unchanged, and a checkpoint never falls inside an accumulation.

Example (inside a model's `train_step`):
    gradients, loss, sums = accumulate(self, features, 4, loss_and_sums)
    self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
"""

from __future__ import annotations

from typing import Callable, Mapping

import tensorflow as tf
import tf_keras

LossAndSums = Callable[[Mapping[str, tf.Tensor]], tuple[tf.Tensor, dict[str, tf.Tensor]]]


def split_batch(features: Mapping[str, tf.Tensor], steps: int) -> dict[str, tf.Tensor]:
    """Each `(batch, ...)` feature as `(steps, batch / steps, ...)`; the batch must divide."""
    def split(value):
        batch = tf.shape(value)[0]
        tf.debugging.assert_equal(batch % steps, 0, message=(
            f"gradient accumulation: the batch on each replica must split into {steps} "
            f"equal micro-batches"))
        return tf.reshape(value, tf.concat([[steps, batch // steps], tf.shape(value)[1:]], 0))

    return {name: split(value) for name, value in features.items()}


def accumulate(model: tf_keras.Model, features: Mapping[str, tf.Tensor], steps: int,
               loss_and_sums: LossAndSums):
    """(gradients, summed loss, summed statistics) of `model` over `steps` micro-batches.

    Args:
        model: the model whose `trainable_variables` get gradients; its optimizer may be a
            `LossScaleOptimizer` (mixed_float16): each micro-batch's loss is scaled and its
            gradients unscaled, and `apply_gradients` then checks the sum for overflow.
        features: the step's batch on this replica.
        steps: N, the number of micro-batches.
        loss_and_sums: micro-batch -> (its share of the step's loss, a dict of statistics
            to sum, such as the numerators of the metrics); it runs in the forward pass.

    Returns:
        The gradients in `model.trainable_variables` order (dense; None where the loss does
        not depend on a variable), the sum of the micro-batch losses and the summed
        statistics.
    """
    variables = model.trainable_variables
    optimizer = model.optimizer
    scaled = isinstance(optimizer, tf_keras.mixed_precision.LossScaleOptimizer)
    micro_batches = split_batch(features, steps)
    unused: list[bool] = []  # per variable: no gradient (learned when the body is traced)

    def micro_step(index):
        piece = {name: value[index] for name, value in micro_batches.items()}
        with tf.GradientTape() as tape:
            loss, sums = loss_and_sums(piece)
            target = optimizer.get_scaled_loss(loss) if scaled else loss
        gradients = tape.gradient(target, variables)
        if scaled:
            gradients = optimizer.get_unscaled_gradients(gradients)
        unused[:] = [gradient is None for gradient in gradients]
        gradients = [tf.zeros_like(variable) if gradient is None
                     else tf.convert_to_tensor(gradient, variable.dtype)
                     for gradient, variable in zip(gradients, variables)]
        return loss, sums, gradients

    # The first micro-batch outside the loop gives the accumulators their structure.
    loss, sums, gradients = micro_step(0)

    def body(index, loss, sums, gradients):
        more_loss, more_sums, more = micro_step(index)
        return (index + 1, loss + more_loss,
                {name: sums[name] + more_sums[name] for name in sums},
                [total + gradient for total, gradient in zip(gradients, more)])

    _, loss, sums, gradients = tf.while_loop(
        lambda index, *_: index < steps, body, (tf.constant(1), loss, sums, gradients),
        parallel_iterations=1)
    gradients = [None if missing else gradient
                 for missing, gradient in zip(unused, gradients)]
    return gradients, loss, sums
