"""Copying the weights of one built model into another: how a run starts from a checkpoint.

Any format is first loaded into one of our models (`convert.load_model`, with its checks);
its weights are then copied into the run's model by their place in the model
(`encoder/...`, `masked_lm/...`, `sentence_head/...`, the checkpoint paths without the
`model/` root and the `/.ATTRIBUTES/VARIABLE_VALUE` suffix), so every sharing layout
transfers, not only the ones the original TF1 names describe.

Example:
    report = copy_weights(loaded.model, pretrainer, ignored=[r"^sentence_head/"])
    report.fresh  # ['sentence_head/dense/bias', 'sentence_head/dense/kernel']
"""

from __future__ import annotations

import dataclasses
import re
from typing import Iterable

import tensorflow as tf

from albert_tf.checkpoints.reading import VARIABLE_SUFFIX, CheckpointError, trackable_variable_paths
from albert_tf.models.encoder import AlbertEncoder

_TRACKERS = "_trackers/"  # metric accumulators: never weights


@dataclasses.dataclass
class WeightTransfer:
    """What `copy_weights` did, by weight name.

    Attributes:
        copied: target weights set from the source.
        fresh: target weights the source lacks or `ignored` named: left as initialized.
        dropped: source weights the target has no place for (e.g. a sentence head when
            continuing with `sentence_objective: none`).
    """

    copied: list[str]
    fresh: list[str]
    dropped: list[str]

    def summary(self) -> str:
        parts = [f"{len(self.copied)} weights copied"]
        for title, names in (("left as initialized", self.fresh),
                             ("in the checkpoint but unused", self.dropped)):
            if names:
                parts.append(f"{title}: {_heads(names)}")
        return "; ".join(parts)


def _heads(names: list[str]) -> str:
    """`masked_lm (4), sentence_head (2)`: weight counts by top-level part."""
    counts: dict[str, int] = {}
    for name in names:
        part = name.split("/", 1)[0]
        counts[part] = counts.get(part, 0) + 1
    return ", ".join(f"{part} ({count})" for part, count in counts.items())


def named_weights(model) -> dict[str, tf.Variable]:
    """{name: variable} of an encoder or pretrainer, named by their place in the model
    (an encoder's weights under `encoder/`, as inside a pretrainer)."""
    root = tf.train.Checkpoint(encoder=model) if isinstance(model, AlbertEncoder) else model
    names = {}
    for path, variable in trackable_variable_paths(tf.train.Checkpoint(model=root)).items():
        name = path[len("model/"):-len(VARIABLE_SUFFIX)]
        if not name.startswith(_TRACKERS):
            names[name] = variable
    return names


def copy_weights(source, target, ignored: Iterable[str] = ()) -> WeightTransfer:
    """Assigns every weight of `target` that `source` has (and no pattern in `ignored`
    matches, by `re.search` on its name) from `source`; all or nothing.

    Raises:
        CheckpointError: some shared weight has another shape in the two models (all are
            listed), or the models share no weight at all.
    """
    patterns = [re.compile(pattern) for pattern in ignored]
    source_weights, target_weights = named_weights(source), named_weights(target)
    wanted = {name: variable for name, variable in target_weights.items()
              if name in source_weights and not any(p.search(name) for p in patterns)}
    misshaped = [f"{name}: checkpoint {list(source_weights[name].shape)}, model "
                 f"{list(variable.shape)}" for name, variable in sorted(wanted.items())
                 if tuple(source_weights[name].shape) != tuple(variable.shape)]
    if misshaped:
        raise CheckpointError("the checkpoint does not fit the run's model; nothing was "
                              "copied.\n  wrong shape (" + str(len(misshaped)) + "):\n    "
                              + "\n    ".join(misshaped))
    if not wanted:
        raise CheckpointError("the checkpoint and the run's model share no weight (or the "
                              "ignore patterns exclude them all)")
    for name, variable in wanted.items():
        variable.assign(tf.cast(source_weights[name], variable.dtype))
    return WeightTransfer(
        copied=sorted(wanted),
        fresh=sorted(name for name in target_weights if name not in wanted),
        dropped=sorted(name for name in source_weights if name not in target_weights))
