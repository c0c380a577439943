"""Any supported checkpoint format in, any out: what `albert-convert` runs.

Formats:
    original     - google-research/albert TF1 checkpoint folder (`model.ckpt-*`,
                   `albert_config.json`, `30k-clean.model`);
    model_garden - a TF2 object checkpoint of tf-models-official's `AlbertEncoder`
                   (encoder only; its sizes come from `config`);
    huggingface  - a transformers ALBERT folder (`config.json`, `model.safetensors` or
                   `pytorch_model.bin`, `spiece.model`);
    ours         - our model folder (`config.yaml`, `checkpoints/ckpt-<step>`);
    keras_hub    - a keras-hub preset folder of `AlbertBackbone` (encoder only), written and
                   read by keras-hub in a Keras 3 process (`keras_hub.py`).
Model Garden is a source only: its encoder has no pretraining heads to write back.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
from typing import Any, Sequence

from albert_tf.checkpoints import huggingface, keras_hub, model_folder, model_garden, original
from albert_tf.checkpoints.original_config import translate_original_config
from albert_tf.checkpoints.reading import CheckpointError, containing_folder
from albert_tf.config import AlbertConfig
from albert_tf.config.checkpoint_formats import CHECKPOINT_FORMATS, TARGET_FORMATS
from albert_tf.config.presets import load_preset
from albert_tf.config.run_folder import checkpoint_step


@dataclasses.dataclass
class LoadedModel:
    """A model read from some format, with what the writers need to know about it."""

    model: Any  # AlbertEncoder or AlbertPretrainer, built and loaded
    config: AlbertConfig
    global_step: int
    source: str
    source_format: str
    spm_model: str | None


def read_model_config(path: str) -> AlbertConfig:
    """An AlbertConfig from a preset name, our YAML, an original `albert_config.json` or a
    transformers `config.json`."""
    if not os.path.exists(path) and os.sep not in path and not path.endswith((".yaml", ".json")):
        return load_preset(path)
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            mapping = json.load(f)
        if "model_type" in mapping or "layer_norm_eps" in mapping:
            return huggingface.config_from_hf(mapping, path)
        return AlbertConfig.from_dict(translate_original_config(mapping, path), source=path)
    return AlbertConfig.from_yaml(path)


def _find_spm_model(folder: str, names: Sequence[str]) -> str | None:
    for name in names:
        matches = sorted(glob.glob(os.path.join(folder, name)))
        if matches:
            return matches[0]
    return None


def load_model(source_format: str, path: str, config: AlbertConfig | None = None,
               sentence_objective: str = "sop", ignored: Sequence[str] = (),
               checkpoint: str | None = None) -> LoadedModel:
    """Reads `path` in `source_format` into one of our models (see the module docstring)."""
    if source_format == "original":
        model, config, step = original.load_original(path, config, sentence_objective, ignored)
        spm = _find_spm_model(containing_folder(path), ["*.model"])
    elif source_format == "huggingface":
        model, config = huggingface.load_huggingface(path, config, sentence_objective, ignored)
        step, spm = 0, _find_spm_model(containing_folder(path), [huggingface.TOKENIZER_FILE,
                                                          "*.model"])
    elif source_format == "model_garden":
        if config is None:
            raise CheckpointError(f"{path}: a Model Garden checkpoint holds no config; pass the "
                                  f"model config (--config: a preset, YAML or JSON)")
        arrays, prefix = model_garden.read_model_garden(path, config)
        model = original.build_model(config, masked_lm=False, sentence_objective="none")
        original.assign_original_arrays(model, arrays, prefix)
        step, spm = 0, None
    elif source_format == "ours":
        model, config, step, spm = _load_ours(path, checkpoint)
    elif source_format == "keras_hub":
        model, config = keras_hub.load_keras_hub(path, config, ignored)
        step, spm = 0, _find_spm_model(path, [keras_hub.TOKENIZER_ASSET])
    else:
        raise CheckpointError(f"unknown source format '{source_format}' "
                              f"(known: {', '.join(CHECKPOINT_FORMATS)})")
    return LoadedModel(model, config, step, os.path.abspath(path), source_format, spm)


def _load_ours(model_dir: str, checkpoint: str | None):
    facts = model_folder.conversion_facts(model_dir)
    if facts.get("masked_lm_head", True):
        model, run_config, path = model_folder.load_pretrainer(model_dir, checkpoint)
    else:
        model, run_config, path = model_folder.load_encoder(model_dir, checkpoint)
    spm, _ = model_folder.folder_tokenizer(model_dir)
    return model, run_config.model, checkpoint_step(path), spm


def save_model(loaded: LoadedModel, target_format: str, output_dir: str,
               spm_model: str | None = None, lower_case: bool = True) -> str:
    """Writes `loaded` in `target_format` into the new folder `output_dir`; returns the
    path of the written checkpoint or weights file."""
    spm = spm_model or loaded.spm_model
    if target_format == "ours":
        facts = {"source": loaded.source, "source_format": loaded.source_format,
                 "lower_case": lower_case}
        return model_folder.save_model_folder(loaded.model, output_dir, loaded.global_step, facts,
                                        spm)
    if target_format == "original":
        return original.save_original(loaded.model, output_dir, loaded.global_step, spm)
    if target_format == "huggingface":
        return huggingface.save_huggingface(loaded.model, output_dir, spm, lower_case)
    if target_format == "keras_hub":
        return keras_hub.save_keras_hub(loaded.model, output_dir, spm)
    raise CheckpointError(f"unknown target format '{target_format}' "
                          f"(known: {', '.join(TARGET_FORMATS)})")
