"""The tf_keras mixed-precision policy, set for the models built inside a block (tf_keras is
imported on use: run configs read `PRECISION_POLICIES` without loading TensorFlow)."""

from __future__ import annotations

import contextlib
from typing import Iterator

PRECISION_POLICIES = ("float32", "mixed_float16", "mixed_bfloat16")


@contextlib.contextmanager
def precision_policy(name: str) -> Iterator[None]:
    """Builds layers under the global policy `name` (one of `PRECISION_POLICIES`) inside the
    block, and puts the previous policy back after it, error or not."""
    import tf_keras

    previous = tf_keras.mixed_precision.global_policy()
    tf_keras.mixed_precision.set_global_policy(name)
    try:
        yield
    finally:
        tf_keras.mixed_precision.set_global_policy(previous)
