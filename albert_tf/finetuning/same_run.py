"""A fine-tuning folder holds one run. Asked for again with other settings, it says so
instead of returning the finished run it holds, or resuming an interrupted one under another
recipe.

Compared is what the run computes: the task, the model, the optimizer, the training recipe
and the data's lengths. Not compared: paths (the checkpoint, tokenizer, model config, data
and run folders, which move when a run folder is copied), the casing (taken from the
checkpoint when the run starts), how the run is spread over devices and batched for speed
(it may resume on other hardware), and what is only shown. A field the stored run does not
have (added to the package after the run was made) is not compared either.

    check_same_run(config, "runs/mrpc")  # ConfigError: ... optimizer.learning_rate: 2e-05 -> 3e-05
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from albert_tf.config.schema import ConfigError, load_yaml_mapping, setting_differences
from albert_tf.finetuning.restore import FINETUNE_CONFIG_FILE

NOT_COMPARED = {
    "model": ("init_checkpoint", "spm_model", "config", "lower_case"),
    "data": ("data_dir", "train_file", "dev_file", "test_file", "cache_dir", "static_shapes",
             "pad_to_multiple_of"),
    "train": ("model_dir", "verbose", "log_every_steps", "eval_batch_size",
              "steps_per_execution", "jit_compile", "gradient_accumulation_steps"),
    "distribution": None,  # the whole section
}


def _compared(settings: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """`settings` without the fields that are not compared, nor those `other` lacks."""
    compared = {}
    for section, values in settings.items():
        if section not in other or (section in NOT_COMPARED
                                     and NOT_COMPARED[section] is None):
            continue
        if isinstance(values, Mapping):
            skipped = NOT_COMPARED.get(section) or ()
            other_section = other[section] if isinstance(other[section], Mapping) else {}
            values = {key: value for key, value in values.items()
                      if key not in skipped and key in other_section}
        compared[section] = values
    return compared


def check_same_run(config, model_dir: str) -> None:
    """Raises ConfigError naming the fields in which `config` (a FinetuneConfig) differs from
    the run already in `model_dir`; nothing when the folder holds no run."""
    path = os.path.join(model_dir, FINETUNE_CONFIG_FILE)
    if not os.path.exists(path):
        return
    stored = load_yaml_mapping(path)  # a corrupt file: an error naming the file and line
    if not stored:
        raise ConfigError(f"{path} is empty: expected the settings albert-finetune writes; "
                          f"delete the folder to start again")
    requested = config.to_dict()
    differences = setting_differences(_compared(stored, requested),
                                      _compared(requested, stored))
    if differences:
        shown = "; ".join(differences[:5]) + ("; ..." if len(differences) > 5 else "")
        raise ConfigError(f"{model_dir} holds a fine-tuning run made with other settings "
                          f"({shown}); give another --model_dir, or delete the folder to "
                          f"start again")
