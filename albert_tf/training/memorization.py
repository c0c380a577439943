"""Memorization: a pretraining head far more often right on training examples than on
held-out ones.

A small model that meets the same examples again (more than one pass over small shards, or
an input pipeline that repeats examples) can learn their sentence labels by heart: the
training SOP/NSP accuracy climbs while the held-out one stays at chance, and the encoder
learns nothing that carries to new text. `MemorizationWatch` compares the two after every
epoch that was evaluated and warns when the gap is larger than chance allows;
`passes_note` says before training how many times each example will be read.
"""

from __future__ import annotations

import math
import sys
from typing import Mapping

import tf_keras

# A training accuracy this far (or three standard errors, if more) above the held-out one
# is taken as memorization. Measured: 76% against 50% when every example was read four
# times in quick succession; 50% against 50% when each was read once; 80% against 75% for
# the main command's run, four passes over its shards (ordinary overfitting, no warning).
MIN_GAP = 0.10


def memorization_warning(logs: Mapping[str, float], heldout_examples: int,
                         where: str) -> str | None:
    """A warning when the training sentence accuracy in `logs` exceeds the held-out one
    (`val_sentence_accuracy`, over `heldout_examples`) by more than max(MIN_GAP, 3 standard
    errors); None otherwise or when either is missing."""
    train, heldout = logs.get("sentence_accuracy"), logs.get("val_sentence_accuracy")
    if train is None or heldout is None or heldout_examples < 1:
        return None
    train, heldout = float(train), float(heldout)
    spread = math.sqrt(max(heldout * (1 - heldout), 0.01) / heldout_examples)
    if train - heldout <= max(MIN_GAP, 3 * spread):
        return None
    return (f"warning: {where} the sentence head is right on {100 * train:.1f}% of training "
            f"pairs but {100 * heldout:.1f}% of {heldout_examples:,} held-out ones: it is "
            f"memorizing training examples rather than learning sentence order, and the "
            f"encoder may learn nothing that carries to new text. Use more training data "
            f"(fewer passes over the shards) and check that the held-out shards were built "
            f"like the training ones")


def passes_note(examples: int | None, train_steps: int, global_batch_size: int,
                dynamic_masking: bool) -> str | None:
    """How many times the run reads each training example (None when the count is
    unknown), with a hint when static masks will be seen again."""
    if not examples:
        return None
    reads = train_steps * global_batch_size
    note = (f"{train_steps:,} steps x {global_batch_size} read {reads:,} examples of "
            f"{examples:,}: {reads / examples:.2f} passes over the training shards")
    if reads > examples and not dynamic_masking:
        note += " (each example's masks repeat; data.dynamic_masking=true draws new ones)"
    return note


class MemorizationWatch(tf_keras.callbacks.Callback):
    """After every evaluated epoch, prints `memorization_warning` to stderr (and keeps it in
    `warnings`); `heldout_examples` is the number of held-out examples an evaluation reads."""

    def __init__(self, heldout_examples: int, enabled: bool = True):
        super().__init__()
        self.heldout_examples = heldout_examples
        self.enabled = enabled
        self.warnings: list[str] = []

    def on_epoch_end(self, epoch, logs=None):
        if not self.enabled or not logs:
            return
        step = int(self.model.optimizer.iterations.numpy())
        warning = memorization_warning(logs, self.heldout_examples, f"at step {step}")
        if warning:
            self.warnings.append(warning)
            print(f"albert-pretrain: {warning}", file=sys.stderr, flush=True)
