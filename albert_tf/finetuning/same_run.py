"""A fine-tuning folder holds one run. Asked for again with other settings, it says so
instead of returning the finished run it holds, or resuming an interrupted one under another
recipe; while one command runs on it, another is refused (`albert_tf.io.owned_folder`: the
folder's lock and its record of the run's settings).

Compared is what the run computes: the task, the model, the optimizer, the training recipe
and the data's lengths. Not compared: paths (the checkpoint, tokenizer, model config, data
and run folders, which move when a run folder is copied), the casing (taken from the
checkpoint when the run starts), how the run is spread over devices and batched for speed
(it may resume on other hardware), and what is only shown. A field the stored run does not
have (added to the package after the run was made) is not compared either.

    with finetuning_folder(config):  # FolderError: ... optimizer.learning_rate: 2e-05 -> 3e-05
        ...
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator, Mapping

from albert_tf.config.schema import ConfigError, load_yaml_mapping
from albert_tf.finetuning.restore import FINETUNE_CONFIG_FILE, MODEL_CONFIG_FILE
from albert_tf.io.owned_folder import owned_folder, settings_without
from albert_tf.loop.precision import PRECISION_FILE

COMMAND = "albert-finetune"
# What albert-finetune writes in its folder (runner.py's docstring shows the layout).
OWN_FILES = (FINETUNE_CONFIG_FILE, MODEL_CONFIG_FILE, "*.model", "features", "best",
             "best.json", "eval_history.jsonl", "eval_results.json", "predictions", "backup",
             "tensorboard", PRECISION_FILE)
NOT_COMPARED = {
    "model": ("init_checkpoint", "spm_model", "config", "lower_case"),
    "data": ("data_dir", "train_file", "dev_file", "test_file", "cache_dir", "static_shapes",
             "pad_to_multiple_of"),
    "train": ("model_dir", "verbose", "log_every_steps", "eval_batch_size",
              "steps_per_execution", "jit_compile", "gradient_accumulation_steps"),
    "distribution": None,  # the whole section
}


def run_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A fine-tuning config's settings (`FinetuneConfig.to_dict()` or a stored
    finetune.yaml) without the fields that are not compared."""
    return settings_without(settings, NOT_COMPARED)


def stored_settings(model_dir: str) -> dict[str, Any] | None:
    """The settings in the finetune.yaml of a folder made before folders had records (None
    without one); a damaged file is a ConfigError naming it."""
    path = os.path.join(model_dir, FINETUNE_CONFIG_FILE)
    if not os.path.exists(path):
        return None
    stored = load_yaml_mapping(path)  # a corrupt file: an error naming the file and line
    if not stored:
        raise ConfigError(f"{path} is empty: expected the settings albert-finetune writes; "
                          f"delete the folder to start again")
    return run_settings(stored)


@contextlib.contextmanager
def finetuning_folder(config) -> Iterator[None]:
    """Holds `config.train.model_dir` (a FinetuneConfig's) while the run uses it: refuses,
    naming the fields, a folder of a run with other settings, and a folder with files
    albert-finetune did not write."""
    model_dir = config.train.model_dir
    with owned_folder(model_dir, COMMAND, run_settings(config.to_dict()), OWN_FILES,
                      legacy_run=lambda: stored_settings(model_dir)):
        yield
