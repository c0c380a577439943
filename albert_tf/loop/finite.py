"""NaN and infinity: refused in the weights a run loads, and a training loop stopped, with an
error naming the step, once its loss is no longer finite.

A NaN spreads: one non-finite weight makes every output it touches NaN, and one NaN loss
makes the next update NaN everywhere. tf_keras's `TerminateOnNaN` only sets
`stop_training`, so `fit` returns normally, the command exits 0 and the checkpoint of that
epoch is still written; `StopAtNonFiniteLoss` raises instead, before the callbacks after it
(checkpoints, backups) see the step.

    non_finite_weights({"encoder/kernel": np.array([1.0, np.nan])})
    # ['encoder/kernel (1 NaN of 2 values)']
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import tf_keras


class NonFiniteError(ValueError):
    """A loss or weight is NaN or infinite; the message names the step or the variables."""


def non_finite_weights(arrays: Mapping[str, object]) -> list[str]:
    """`name (n NaN, m infinite of k values)` for each floating-point array of `arrays`
    holding NaN or infinity, in the mapping's order."""
    found = []
    for name, value in arrays.items():
        array = np.asarray(value)
        if not np.issubdtype(array.dtype, np.floating) or np.isfinite(array).all():
            continue
        nans = int(np.isnan(array).sum())
        infinite = int(np.isinf(array).sum())
        counts = [f"{nans:,} NaN" if nans else "", f"{infinite:,} infinite" if infinite else ""]
        found.append(f"{name} ({', '.join(c for c in counts if c)} of {array.size:,} values)")
    return found


def non_finite_message(source: str, found: list[str], listed: int = 10) -> str:
    """The error for weights of `source` that `non_finite_weights` found."""
    shown = "\n    ".join(found[:listed])
    more = f"\n    ... and {len(found) - listed} more" if len(found) > listed else ""
    return (f"{source}: {len(found)} weight(s) hold NaN or infinity, so every output they "
            f"touch would too; nothing is used from it:\n    {shown}{more}")


def check_finite_variables(variables, source: str) -> None:
    """Raises NonFiniteError naming each variable of `variables` (tf.Variables) that holds
    NaN or infinity, `source` saying where they were loaded from."""
    found = non_finite_weights({variable.name: variable.numpy() for variable in variables})
    if found:
        raise NonFiniteError(non_finite_message(source, found))


class StopAtNonFiniteLoss(tf_keras.callbacks.Callback):
    """Raises NonFiniteError at the end of the first `train_function` call whose loss (the
    epoch's running mean, which a single NaN or infinite step makes non-finite) is not
    finite. Put it first among the callbacks, so no checkpoint or backup of that step is
    written.

    Args:
        steps_per_execution: the steps one call runs, to name the steps the loss went bad in.
    """

    def __init__(self, steps_per_execution: int = 1):
        super().__init__()
        self.steps_per_execution = steps_per_execution

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None or math.isfinite(float(loss)):
            return
        step = int(self.model.optimizer.iterations.numpy())
        first = step - self.steps_per_execution + 1
        where = f"step {step}" if first >= step else f"steps {max(first, 1)}-{step}"
        raise NonFiniteError(
            f"the training loss became {float(loss)} in {where}; training stopped there "
            f"(nothing of that step was saved; the checkpoints before it are kept). Lower "
            f"optimizer.learning_rate or lengthen optimizer.warmup_steps, in another "
            f"train.model_dir")
