"""Factories for the pieces every ALBERT layer uses: its initializer, LayerNorm and dropout."""

from __future__ import annotations

import tensorflow as tf
import tf_keras


def truncated_normal(stddev: float) -> tf_keras.initializers.Initializer:
    """A fresh truncated-normal initializer (fresh, because an unseeded tf_keras initializer
    reused for several weights gives them identical values)."""
    return tf_keras.initializers.TruncatedNormal(stddev=stddev)


def float32_layer_norm(epsilon: float, name: str) -> tf_keras.layers.LayerNormalization:
    """LayerNorm over the last axis, computed in float32 under any mixed-precision policy."""
    return tf_keras.layers.LayerNormalization(axis=-1, epsilon=epsilon, dtype="float32",
                                              name=name)


def dropout(rate: float) -> tf_keras.layers.Dropout:
    """Dropout whose masks come from a seeded `tf.random.Generator` (tf_keras's "stateful"
    random type) rather than TensorFlow's legacy stateful random ops.

    Under XLA (`jit_compile`, and always on TPU) the legacy ops ignore their seeds and draw
    from one counter per process, so a second training run in the same process got other
    masks than the same seeded run in a fresh process. The generator is seeded when the layer
    is first called (from Python's `random`, which `tf_keras.utils.set_random_seed` seeds),
    its state lives outside checkpoints and `weights`, and under a `tf.distribute` strategy
    each replica draws its own stream.
    """
    return tf_keras.layers.Dropout(rate, rng_type="stateful")


def build_sublayer(layer: tf_keras.layers.Layer, input_shape) -> None:
    """Builds `layer` under its own name scope, so its weights are named `parent/layer/...`."""
    with tf.name_scope(layer.name):
        layer.build(input_shape)
