"""Writing TensorBoard scalars whatever summary state an earlier training left behind.

tf_keras's `TensorBoard` callback enters `tf.summary.record_if(<its update frequency>)` when
training begins and leaves it when training ends; a `fit` that raises (a NaN loss stopped, a
lost peer, Ctrl-C in a notebook) never leaves it, so every later `tf.summary.scalar` in that
thread records only while the dead callback's step counter is a multiple of its frequency (on
TF 2.20, after a `fit` that raised, a writer of one's own recorded nothing).
The callbacks here choose their own steps, so they write with recording switched on.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import tensorflow as tf


@contextlib.contextmanager
def scalars_at(writer: tf.summary.SummaryWriter, step: int) -> Iterator[None]:
    """Make `writer` the default at `step` with recording on, for the `with` body."""
    with writer.as_default(step=step), tf.summary.record_if(True):
        yield
