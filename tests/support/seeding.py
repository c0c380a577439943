"""Seeding a test's random draws without touching TensorFlow's global seed.

`tf_keras.utils.set_random_seed` seeds Python's `random`, numpy's global generator, tf_keras's
initializer seeds and TensorFlow's global seed; setting the last one clears TensorFlow's eager
kernel cache, so every kernel is built again afterwards (it once also destroyed every
tensorflow-text tokenizer built before; `albert_tf.preprocessing.graph_tokenizer` now keeps
their resources, and tests/albert_tf/preprocessing's reseed test pins it). `seed_draws` seeds
the first three only: the initial weights of tf_keras layers and numpy/Python data draws.
TensorFlow's global seed is set once per session (tests/conftest.py); a test whose result
depends on TensorFlow's own random ops (dropout, an unseeded tf.random call) passes them a
seed.

Example:
    seed_draws(seed)  # the initial weights
    model = AlbertPretrainer(tiny_config, "sop")
"""

from __future__ import annotations

import random

import numpy as np
from tf_keras.src import backend as keras_backend  # its initializers' seed generator


def seed_draws(seed: int) -> None:
    """Seeds Python's and numpy's global generators and tf_keras's initializer seeds."""
    random.seed(seed)
    np.random.seed(seed)
    keras_backend._SEED_GENERATOR.generator = random.Random(seed)
