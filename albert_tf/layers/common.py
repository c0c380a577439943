"""Factories for the two pieces every ALBERT layer uses: its initializer and its LayerNorm."""

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


def build_sublayer(layer: tf_keras.layers.Layer, input_shape) -> None:
    """Builds `layer` under its own name scope, so its weights are named `parent/layer/...`."""
    with tf.name_scope(layer.name):
        layer.build(input_shape)
