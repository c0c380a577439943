"""Representation collapse: an encoder that gives (nearly) the same output for every input.

A collapsed encoder still trains without error: its masked-LM head predicts the unigram
distribution from the one vector every token gets, the loss sits on that plateau, and
fine-tuning from it is worse than from a random start. Nothing in the losses says so; the
spread of the outputs across inputs does, so `albert-eval` reports it and pretraining warns
when it falls to about zero.

The spread of a set of vectors is the mean over hidden dimensions of their standard deviation
across the set, divided by their root mean square: scale-free, about 0.5-1 for a working
encoder's LayerNorm outputs, 0 when every vector is the same.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, Mapping

import numpy as np
import tensorflow as tf
import tf_keras

from albert_tf.io.summaries import scalars_at
from albert_tf.models.encoder import INPUT_NAMES

# Below this spread an output is taken as collapsed (working encoders measure 0.5-1; a
# collapsed one on the CPU presets measured under 1e-4).
COLLAPSE_SPREAD = 0.01


def spread(vectors: np.ndarray) -> float:
    """Mean per-dimension standard deviation of `vectors` `(count, width)` over their root
    mean square (0.0 for fewer than two vectors or all-zero ones)."""
    vectors = np.asarray(vectors, np.float64)
    rms = np.sqrt(np.mean(np.square(vectors))) if vectors.size else 0.0
    if len(vectors) < 2 or rms == 0.0:
        return 0.0
    return float(vectors.std(axis=0).mean() / rms)


def representation_spread(encoder: tf_keras.Model,
                          batches: Iterable[Mapping[str, tf.Tensor]]) -> dict[str, float]:
    """The spread of the encoder's outputs over `batches` (dicts with the encoder inputs):

    - `sequence_spread`: over every non-padding token's `sequence_output` vector;
    - `pooled_spread`: over every example's `pooled_output`.
    """
    tokens, pooled = [], []
    for batch in batches:
        outputs = encoder({name: batch[name] for name in INPUT_NAMES}, training=False)
        mask = np.asarray(batch["input_mask"]).astype(bool)
        tokens.append(np.asarray(outputs["sequence_output"], np.float32)[mask])
        pooled.append(np.asarray(outputs["pooled_output"], np.float32))
    return {"sequence_spread": spread(np.concatenate(tokens)),
            "pooled_spread": spread(np.concatenate(pooled))}


def collapse_warning(spreads: Mapping[str, float], where: str) -> str | None:
    """A warning naming the collapsed outputs, or None when every spread is above
    `COLLAPSE_SPREAD`."""
    collapsed = {name: value for name, value in spreads.items() if value < COLLAPSE_SPREAD}
    if not collapsed:
        return None
    shown = ", ".join(f"{name} {value:.2g}" for name, value in sorted(collapsed.items()))
    return (f"warning: {where} the encoder gives nearly the same output for every input "
            f"({shown}; a working encoder measures 0.5-1): its representations have "
            f"collapsed. Lower optimizer.learning_rate, lengthen optimizer.warmup_steps or "
            f"set init.mlm_output_bias=unigram")


class CollapseWatch(tf_keras.callbacks.Callback):
    """At every epoch end, measures the representation spread on a fixed batch, writes it to
    TensorBoard (`log_dir`, run `train`: `representation/sequence_spread`, `.../pooled_spread`)
    and prints a warning to stderr when it has collapsed.

    Args:
        batch: a dict with the encoder inputs (a held-out batch when there is one).
        log_dir: TensorBoard folder; None writes nothing.
        enabled: False on workers other than the chief (they measure nothing).
    """

    def __init__(self, batch: Mapping[str, tf.Tensor], log_dir: str | None,
                 enabled: bool = True):
        super().__init__()
        self.batch = batch
        self.log_dir = log_dir
        self.enabled = enabled
        self.warnings: list[str] = []
        self._writer = None

    def on_train_begin(self, logs=None):
        if self.enabled and self.log_dir:
            self._writer = tf.summary.create_file_writer(os.path.join(self.log_dir, "train"))

    def on_epoch_end(self, epoch, logs=None):
        if not self.enabled:
            return
        step = int(self.model.optimizer.iterations.numpy())
        spreads = representation_spread(self.model.encoder, [self.batch])
        if self._writer is not None:
            with scalars_at(self._writer, step):
                for name, value in spreads.items():
                    tf.summary.scalar(f"representation/{name}", value)
        warning = collapse_warning(spreads, f"at step {step}")
        if warning:
            self.warnings.append(warning)
            print(f"albert-pretrain: {warning}", file=sys.stderr, flush=True)

    def on_train_end(self, logs=None):
        if self._writer is not None:
            self._writer.close()
            self._writer = None
