"""keras-hub presets (Keras 3): `albert-convert --to keras_hub` and `--from keras_hub`.

A keras-hub preset folder (`config.json`, `model.weights.h5`, `metadata.json`, and with a
SentencePiece model `tokenizer.json` + `assets/tokenizer/`) holds an
`keras_hub.models.AlbertBackbone`: the encoder, without pretraining heads. It is written and
read by keras-hub itself, in a separate process (`keras_hub_worker.py`, Keras 3), from and to
the original ALBERT names, so `keras_hub.models.AlbertBackbone.from_preset(folder)` loads
exactly what keras-hub would save.

keras-hub's backbone has fewer knobs than ours. A model is refused, naming the field, when
its layers are not a multiple of its groups (keras-hub gives each group L / N consecutive
layers, which is our `int(layer * N / L)` only then), when it shares less than whole layers,
or when its activation or LayerNorm epsilon is not ALBERT's (keras-hub fixes gelu-tanh and
1e-12). keras-hub always projects E -> H; with E = H, which has no projection in the original
layout, an identity projection is written and only an identity one is read back.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

import numpy as np

from albert_tf.checkpoints.original import assign_original_arrays, build_model, original_arrays
from albert_tf.checkpoints.reading import CheckpointError
from albert_tf.checkpoints.staging import staged_folder
from albert_tf.config import AlbertConfig, ConfigError
from albert_tf.io.processes import python_module_command

PROJECTION = "bert/encoder/embedding_hidden_mapping_in/"
TOKENIZER_ASSET = "assets/tokenizer/vocabulary.spm"  # where keras-hub keeps the tokenizer
# keras-hub config key -> our AlbertConfig field.
_FIELDS = {"vocabulary_size": "vocab_size", "num_layers": "num_layers",
           "num_heads": "num_attention_heads", "embedding_dim": "embedding_size",
           "hidden_dim": "hidden_size", "intermediate_dim": "intermediate_size",
           "num_groups": "num_groups", "num_inner_repetitions": "inner_group_num",
           "max_sequence_length": "max_position_embeddings", "num_segments": "type_vocab_size"}
# Fields keras-hub cannot vary, and the value it fixes.
_FIXED = {"sharing": "all", "hidden_activation": "gelu_tanh", "layer_norm_epsilon": 1e-12}


def keras_hub_config(config: AlbertConfig) -> dict:
    """The `AlbertBackbone` arguments for `config`; a ConfigError names what keras-hub cannot
    hold."""
    problems = [f"model.{name} is {getattr(config, name)!r}; keras-hub fixes {value!r}"
                for name, value in _FIXED.items() if getattr(config, name) != value]
    if config.num_layers % config.num_groups:
        problems.append(f"model.num_layers ({config.num_layers}) is not a multiple of "
                        f"model.num_groups ({config.num_groups}); keras-hub gives each group "
                        f"num_layers / num_groups consecutive layers")
    if problems:
        raise ConfigError("this model has no keras-hub AlbertBackbone layout:\n  "
                          + "\n  ".join(problems))
    values = {key: getattr(config, ours) for key, ours in _FIELDS.items()}
    return {**values, "dropout": config.hidden_dropout}


def config_from_keras_hub(values: dict, source: str) -> AlbertConfig:
    mapping = {ours: values[key] for key, ours in _FIELDS.items()}
    return AlbertConfig.from_dict({**mapping, **_FIXED, "hidden_dropout": values["dropout"],
                                   "attention_dropout": values["dropout"]}, source=source)


def _run_worker(*arguments: str) -> None:
    """Runs the Keras 3 worker; its error output becomes the CheckpointError's message."""
    # The safe path: a keras_hub.py in the user's working folder is never imported instead.
    command = python_module_command("albert_tf.checkpoints.keras_hub_worker", *arguments)
    environment = {**os.environ, "KERAS_BACKEND": "tensorflow", "TF_CPP_MIN_LOG_LEVEL": "2"}
    environment.pop("TF_USE_LEGACY_KERAS", None)  # the worker needs Keras 3
    finished = subprocess.run(command, capture_output=True, text=True, env=environment)
    if finished.returncode:
        lines = [line for line in finished.stderr.strip().splitlines() if line.strip()]
        if any("No module named 'keras_hub'" in line for line in lines):
            raise CheckpointError("keras-hub is not installed: pip install keras-hub")
        raise CheckpointError("keras-hub could not convert the model:\n  "
                              + "\n  ".join(lines[-8:]))


def save_keras_hub(model, output_dir: str, spm_model: str | None = None) -> str:
    """Writes the encoder of `model` (an encoder or pretrainer; heads are not part of a
    keras-hub backbone) as a keras-hub preset folder; returns the folder."""
    encoder = getattr(model, "encoder", model)
    config = keras_hub_config(encoder.config)
    arrays = original_arrays(encoder)
    if PROJECTION + "kernel" not in arrays:  # E = H: keras-hub projects anyway
        arrays[PROJECTION + "kernel"] = np.eye(encoder.config.hidden_size, dtype=np.float32)
        arrays[PROJECTION + "bias"] = np.zeros(encoder.config.hidden_size, np.float32)
    with staged_folder(output_dir, "albert-convert", {"to": "keras_hub"}) as staging, \
            tempfile.TemporaryDirectory() as scratch:
        arrays_path = os.path.join(scratch, "arrays.npz")
        config_path = os.path.join(scratch, "config.json")
        np.savez(arrays_path, **arrays)
        with open(config_path, "w", encoding="utf-8") as f:
            json.dump(config, f)
        _run_worker("write", arrays_path, config_path, staging,
                    *([os.path.abspath(spm_model)] if spm_model else []))
    return os.path.abspath(output_dir)


def load_keras_hub(path: str, config: AlbertConfig | None = None, ignored=()):
    """(encoder, config) from a keras-hub preset folder; `config`, when given, must describe
    the same backbone (it may set other dropout)."""
    with tempfile.TemporaryDirectory() as scratch:
        arrays_path = os.path.join(scratch, "arrays.npz")
        config_path = os.path.join(scratch, "config.json")
        _run_worker("read", os.path.abspath(path), arrays_path, config_path)
        arrays = dict(np.load(arrays_path))
        with open(config_path, encoding="utf-8") as f:
            found = config_from_keras_hub(json.load(f), os.path.join(path, "config.json"))
    config = config or found
    encoder = build_model(config, masked_lm=False, sentence_objective="none")
    if encoder.embedding.projection is None:
        kernel = arrays.pop(PROJECTION + "kernel")
        bias = arrays.pop(PROJECTION + "bias")
        if not (np.allclose(kernel, np.eye(len(kernel))) and not np.any(bias)):
            raise CheckpointError(f"{path}: embedding_dim = hidden_dim with a projection that "
                                  f"is not the identity; ALBERT has no projection then")
    assign_original_arrays(encoder, arrays, path, ignored=ignored)
    return encoder, config
