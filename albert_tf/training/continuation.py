"""A pretraining folder across commands: which run it holds, which settings may change when
the command is run again, and the checkpoint the next step starts from.

The folder is `albert_tf.io.owned_folder`'s: locked while `albert-pretrain` runs, with a
record of the run's settings. Running the command again on it

- resumes an interrupted run from its backup (Keras BackupAndRestore);
- leaves a finished run as it is (its final checkpoint is evaluated again);
- continues a finished run asked for more steps (`train.train_steps` raised) from its last
  checkpoint: weights, optimizer state and step counter, and the data position after it;
  its checkpoints stay, the new ones follow them;
- refuses any other difference, naming the fields, before anything is written.

    with pretraining_folder(config, chief=True):
        ...
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator

import tensorflow as tf

from albert_tf.checkpoints.reading import restore_checked
from albert_tf.config import ConfigError
from albert_tf.config.pretraining import PretrainConfig
from albert_tf.config.run_folder import CONFIG_FILE, SUBFOLDERS, checkpoint_step, run_folders
from albert_tf.config.schema import parse_yaml
from albert_tf.io.owned_folder import owned_folder, settings_without
from albert_tf.loop.precision import PRECISION_FILE

COMMAND = "albert-pretrain"
# What may change between two commands on one run folder: the step count, and with it the
# learning-rate schedule (it decays to `train_steps`). Raising it continues a finished run.
MAY_CHANGE = ("train.train_steps",)
# Not settings of the run, never compared: where its folder is, how much the command prints,
# and the tokenizer section, which the run fills from its shards' manifest.
NOT_SETTINGS = {"train": ("model_dir", "verbose"), "tokenizer": None}
# What albert-pretrain writes in a run folder besides the tokenizer copy (and the downstream
# check's files, which it wrote there before the check moved to the lab).
OWN_FILES = (CONFIG_FILE, *SUBFOLDERS, PRECISION_FILE, "eval_results.json",
             "downstream_check", "downstream_check.json")


def run_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """A run's settings (`PretrainConfig.to_dict()`, or a stored config.yaml) without the
    fields of `NOT_SETTINGS`."""
    return settings_without(settings, NOT_SETTINGS)


def _stored_settings(model_dir: str) -> dict[str, Any] | None:
    """The settings in the config.yaml of a run folder made before folders had records."""
    path = os.path.join(model_dir, CONFIG_FILE)
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path) as file:
        mapping = parse_yaml(file.read())
    return run_settings(mapping) if isinstance(mapping, dict) else None


def check_steps_left(config: PretrainConfig) -> None:
    """Raises ConfigError when the folder's last checkpoint is past `train.train_steps`: a
    run continues with more steps, it cannot be cut back."""
    latest = tf.train.latest_checkpoint(run_folders(config.train.model_dir)["checkpoints"])
    if latest is not None and checkpoint_step(latest) > config.train.train_steps:
        raise ConfigError(f"field 'train.train_steps' ({config.train.train_steps}): the run in "
                          f"{config.train.model_dir} has reached step "
                          f"{checkpoint_step(latest)} ({latest}); ask for at least that many "
                          f"steps, or give another train.model_dir")


@contextlib.contextmanager
def pretraining_folder(config: PretrainConfig, chief: bool = True) -> Iterator[None]:
    """Holds `train.model_dir` for the run while it trains (the chief only: other workers
    write only their own temporary folders); refuses a folder of another run or with files
    that are not the run's, and one whose checkpoints are past `train.train_steps`."""
    if not chief:
        yield
        return
    check_steps_left(config)
    own = [*OWN_FILES, os.path.basename(config.tokenizer.spm_model or "*.model")]
    with owned_folder(config.train.model_dir, COMMAND, run_settings(config.to_dict()), own,
                      may_differ=MAY_CHANGE,
                      legacy_run=lambda: _stored_settings(config.train.model_dir)):
        yield


def model_weights(model) -> list[tf.Variable]:
    """A Keras model's weights without its metrics' accumulators."""
    metric_ids = {id(variable) for metric in model.metrics for variable in metric.variables}
    return [variable for variable in model.weights if id(variable) not in metric_ids]


def restore_run_checkpoint(model, checkpoint: str) -> int:
    """Restores every weight and the optimizer state (step counter, moments) of a compiled
    `model` from a run checkpoint (`StepCheckpoint`'s); returns its step. Anything the
    checkpoint lacks, or holds in another shape, or NaN or infinity in it, is a
    CheckpointError naming the variables, and nothing is restored then."""
    model.optimizer.build(model.trainable_variables)  # creates the moments to restore into
    restore_checked(tf.train.Checkpoint(model=model), checkpoint,
                    [*model_weights(model), *model.optimizer.variables])
    return checkpoint_step(checkpoint)
