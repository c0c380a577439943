"""Hugging Face `transformers` ALBERT weights: `config.json` + `model.safetensors` (or the older
`pytorch_model.bin`), to and from the original layout.

The PyTorch state dict names the same groups and inner groups as the original checkpoint
(`albert.encoder.albert_layer_groups.<g>.albert_layers.<j>.`), and stores every dense kernel
as torch's `[out, in]` weight, the transpose of the TF kernel; the sentence head's `[2, H]`
weight is already the original's layout. The MLM decoder is tied to the word embeddings
(`predictions.decoder.weight` is not saved) and its bias to `predictions.bias`; we write
`predictions.decoder.bias` too, since the TF port of `transformers` reads the bias from there.

safetensors files are read and written with the `safetensors` package's numpy API; torch is
imported only for `.bin` files, and only then (`pip install torch`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from typing import Any, Iterable, Mapping

import numpy as np
import tensorflow as tf

from albert_tf.checkpoints.original import (
    TRAINING_STATE,
    assign_original_arrays,
    build_model,
    original_group_count,
    original_variables,
    variable_array,
)
from albert_tf.checkpoints.reading import CheckpointError, check_variables, containing_folder
from albert_tf.checkpoints.staging import staged_folder
from albert_tf.config import AlbertConfig, ConfigError
from albert_tf.io.names import path_inside

CONFIG_FILE = "config.json"
SAFETENSORS_FILE = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"
TORCH_FILE = "pytorch_model.bin"
TOKENIZER_FILE = "spiece.model"  # the name transformers' AlbertTokenizer looks for

_BLOCK = r"bert/encoder/transformer/group_(\d+)/inner_group_(\d+)/"
_LAYER = r"albert.encoder.albert_layer_groups.\1.albert_layers.\2."
# Original module paths -> PyTorch module paths; the variable's leaf name follows each.
_MODULES = (
    (r"bert/embeddings/LayerNorm/", "albert.embeddings.LayerNorm."),
    (r"bert/encoder/embedding_hidden_mapping_in/", "albert.encoder.embedding_hidden_mapping_in."),
    (_BLOCK + r"attention_1/self/(query|key|value)/", _LAYER + r"attention.\3."),
    (_BLOCK + r"attention_1/output/dense/", _LAYER + "attention.dense."),
    (_BLOCK + r"LayerNorm/", _LAYER + "attention.LayerNorm."),
    (_BLOCK + r"ffn_1/intermediate/dense/", _LAYER + "ffn."),
    (_BLOCK + r"ffn_1/intermediate/output/dense/", _LAYER + "ffn_output."),
    (_BLOCK + r"LayerNorm_1/", _LAYER + "full_layer_layer_norm."),
    (r"bert/pooler/dense/", "albert.pooler."),
    (r"cls/predictions/transform/dense/", "predictions.dense."),
    (r"cls/predictions/transform/LayerNorm/", "predictions.LayerNorm."),
)
# Whole original names -> PyTorch keys.
_TENSORS = {
    **{f"bert/embeddings/{table}": f"albert.embeddings.{table}.weight"
       for table in ("word_embeddings", "position_embeddings", "token_type_embeddings")},
    "cls/predictions/output_bias": "predictions.bias",
    "cls/seq_relationship/output_weights": "sop_classifier.classifier.weight",
    "cls/seq_relationship/output_bias": "sop_classifier.classifier.bias",
}
_LEAVES = {"kernel": "weight", "gamma": "weight", "beta": "bias", "bias": "bias"}
DECODER_BIAS = "predictions.decoder.bias"
DECODER_WEIGHT = "predictions.decoder.weight"
# Keys transformers may save that carry nothing of their own.
_IGNORED = (r"(^|\.)embeddings\.position_ids$", r"(^|\.)embeddings\.token_type_ids$")

# config.json fields -> AlbertConfig fields.
_CONFIG_FIELDS = {
    "vocab_size": "vocab_size", "embedding_size": "embedding_size",
    "hidden_size": "hidden_size", "num_hidden_layers": "num_layers",
    "num_hidden_groups": "num_groups", "inner_group_num": "inner_group_num",
    "num_attention_heads": "num_attention_heads", "intermediate_size": "intermediate_size",
    "hidden_act": "hidden_activation", "hidden_dropout_prob": "hidden_dropout",
    "attention_probs_dropout_prob": "attention_dropout",
    "max_position_embeddings": "max_position_embeddings", "type_vocab_size": "type_vocab_size",
    "initializer_range": "initializer_range", "layer_norm_eps": "layer_norm_epsilon",
}
_ACTIVATIONS_IN = {"gelu_new": "gelu_tanh", "gelu_fast": "gelu_tanh",
                   "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu_exact", "relu": "relu"}
_ACTIVATIONS_OUT = {"gelu_tanh": "gelu_new", "gelu_exact": "gelu", "relu": "relu"}


def hf_name(original: str) -> tuple[str, bool]:
    """(PyTorch state-dict key, stored transposed) for an original variable name."""
    if original in _TENSORS:
        return _TENSORS[original], False
    for pattern, replacement in _MODULES:
        match = re.fullmatch(pattern + r"(\w+)", original)
        if match and match.group(match.re.groups) in _LEAVES:
            leaf = match.group(match.re.groups)
            module = match.expand(replacement)
            return module + _LEAVES[leaf], leaf == "kernel"
    raise CheckpointError(f"no Hugging Face name for original variable '{original}'")


def config_from_hf(mapping: Mapping[str, Any], source: str) -> AlbertConfig:
    """AlbertConfig from a transformers ALBERT `config.json` mapping."""
    if mapping.get("model_type", "albert") != "albert":
        raise ConfigError(f"{source}: field 'model_type' must be 'albert', "
                          f"got '{mapping['model_type']}'")
    if mapping.get("position_embedding_type", "absolute") != "absolute":
        raise ConfigError(f"{source}: field 'position_embedding_type' must be 'absolute' "
                          f"(ALBERT's learned positions), got "
                          f"'{mapping['position_embedding_type']}'")
    values: dict[str, Any] = {"sharing": "all"}
    for key, ours in _CONFIG_FIELDS.items():
        if key in mapping:
            values[ours] = mapping[key]
    activation = values.get("hidden_activation", "gelu_new")
    if activation not in _ACTIVATIONS_IN:
        raise ConfigError(f"{source}: field 'hidden_act' must be one of "
                          f"{', '.join(_ACTIVATIONS_IN)}, got '{activation}'")
    values["hidden_activation"] = _ACTIVATIONS_IN[activation]
    return AlbertConfig.from_dict(values, source=source)


def config_to_hf(config: AlbertConfig, architecture: str) -> dict[str, Any]:
    """A transformers `config.json` mapping for `config` (sharing all or none only)."""
    values = {key: getattr(config, ours) for key, ours in _CONFIG_FIELDS.items()}
    values["num_hidden_groups"] = original_group_count(config)  # refuses partial sharing
    values["hidden_act"] = _ACTIVATIONS_OUT[config.hidden_activation]
    return {"architectures": [architecture], "model_type": "albert", **values,
            "position_embedding_type": "absolute", "classifier_dropout_prob": 0.1,
            "pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 3}


def hf_arrays(model) -> dict[str, np.ndarray]:
    """The model's weights as a transformers ALBERT state dict of float32 arrays."""
    arrays = {}
    for name, entry in original_variables(model).items():
        key, transposed = hf_name(name)
        arrays[key] = variable_array(entry.variable, transposed != entry.transposed)
    if "predictions.bias" in arrays:
        arrays[DECODER_BIAS] = arrays["predictions.bias"].copy()
    return arrays


def _key_prefix(keys: Iterable[str], source: str) -> str:
    keys = set(keys)
    for prefix in ("albert.", ""):
        if f"{prefix}embeddings.word_embeddings.weight" in keys:
            return prefix
    raise CheckpointError(f"{source}: not a transformers ALBERT state dict (no "
                          f"'albert.embeddings.word_embeddings.weight')")


def _check_tied(state: Mapping[str, np.ndarray], prefix: str, source: str) -> None:
    """The tied copies, when saved, must equal what they are tied to."""
    for key, tied_to in ((DECODER_WEIGHT, f"{prefix}embeddings.word_embeddings.weight"),
                         (DECODER_BIAS, "predictions.bias")):
        if key in state and tied_to in state and not np.array_equal(state[key], state[tied_to]):
            raise CheckpointError(f"{source}: '{key}' differs from '{tied_to}'; ALBERT ties "
                                  f"them, so untied weights cannot be loaded")


def assign_hf_arrays(model, state: Mapping[str, np.ndarray], source: str,
                     ignored: Iterable[str] = ()) -> None:
    """Loads a transformers state dict into `model` after checking every key and shape."""
    prefix = _key_prefix(state, source)
    _check_tied(state, prefix, source)
    state = dict(state)
    if "predictions.bias" not in state and DECODER_BIAS in state:
        state["predictions.bias"] = state[DECODER_BIAS]
    keys, expected = {}, {}
    for name, entry in original_variables(model).items():
        key, transposed = hf_name(name)
        if key.startswith("albert."):  # an AlbertModel state dict has no "albert." prefix
            key = prefix + key[len("albert."):]
        keys[name] = (key, transposed)
        expected[key] = entry.original_shape[::-1] if transposed else entry.original_shape
    check_variables(expected, {key: tuple(np.shape(value)) for key, value in state.items()},
                    source, ignored=(*_IGNORED, r"^predictions\.decoder\.(weight|bias)$",
                                     *ignored))
    arrays = {name: tf.transpose(state[key]).numpy() if transposed else state[key]
              for name, (key, transposed) in keys.items()}
    assign_original_arrays(model, arrays, source, TRAINING_STATE)


def read_hf_state(path: str) -> tuple[dict[str, np.ndarray], str]:
    """(state dict of numpy arrays, the file read) from a folder or a weights file."""
    if os.path.isdir(path):
        for name in (SAFETENSORS_FILE, SAFETENSORS_INDEX, TORCH_FILE):
            if os.path.exists(os.path.join(path, name)):
                path = os.path.join(path, name)
                break
        else:
            raise CheckpointError(f"{path}: no {SAFETENSORS_FILE}, {SAFETENSORS_INDEX} or "
                                  f"{TORCH_FILE} in this folder")
    if not os.path.exists(path):
        raise CheckpointError(f"{path}: no such file")
    if path.endswith(".index.json"):
        state = {}
        for shard in _index_shards(path):
            state.update(_read_safetensors(shard))
        return state, path
    if path.endswith(".safetensors"):
        return _read_safetensors(path), path
    return _read_torch(path), path


def _index_shards(path: str) -> list[str]:
    """The safetensors files a transformers index (`weight_map`: weight -> file) names, each
    checked to be a file of the index's folder."""
    try:
        with open(path, encoding="utf-8") as f:
            names = sorted(set(json.load(f)["weight_map"].values()))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise CheckpointError(f"{path}: not a transformers index (expected an object with a "
                              f"weight_map of weight name -> file; {error})") from None
    folder = os.path.dirname(path) or "."
    return [path_inside(folder, name, f"{path}: weight_map", CheckpointError)
            for name in names]


def _read_safetensors(path: str) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    try:
        return load_file(path)
    except Exception as error:  # SafetensorError, OSError: truncated or not safetensors
        raise CheckpointError(f"{path}: cannot read safetensors file ({error}); the file is "
                              f"truncated, corrupted or not safetensors") from None


def _read_torch(path: str) -> dict[str, np.ndarray]:
    try:
        import torch
    except ImportError:
        raise CheckpointError(f"{path}: reading a PyTorch .bin file needs torch "
                              f"(`pip install torch`); safetensors files need only the "
                              f"`safetensors` package") from None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise CheckpointError(f"{path}: cannot read PyTorch file ({error}); the file is "
                              f"truncated, corrupted or not a state dict") from None
    return {key: value.float().numpy() for key, value in state.items()}


def read_hf_config(path: str) -> AlbertConfig:
    folder = containing_folder(path)
    config_path = os.path.join(folder, CONFIG_FILE)
    if not os.path.exists(config_path):
        raise CheckpointError(f"{folder}: no {CONFIG_FILE} beside the weights; pass the model "
                              f"config (--config)")
    try:
        with open(config_path, encoding="utf-8") as f:
            mapping = json.load(f)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{config_path}:{error.lineno}: not valid JSON ({error.msg})") from None
    return config_from_hf(mapping, config_path)


def load_huggingface(path: str, config: AlbertConfig | None = None,
                     sentence_objective: str = "sop", ignored: Iterable[str] = ()):
    """(model, config) from transformers ALBERT weights: an `AlbertPretrainer` when the
    MLM head is there (with a sentence head when `sop_classifier` is), else an encoder."""
    state, source = read_hf_state(path)
    config = config or read_hf_config(path)
    has_mlm = "predictions.bias" in state or DECODER_BIAS in state
    has_sentence = "sop_classifier.classifier.weight" in state
    model = build_model(config, has_mlm, sentence_objective if has_sentence else "none")
    assign_hf_arrays(model, state, source, ignored)
    return model, config


def save_huggingface(model, output_dir: str, spm_model: str | None = None,
                     lower_case: bool = True) -> str:
    """Writes `model` as a transformers ALBERT folder (config.json, model.safetensors and,
    given a SentencePiece model, spiece.model + tokenizer_config.json); returns the weights
    file. An encoder is written as `AlbertModel`, a pretrainer as `AlbertForPreTraining`
    (`AlbertForMaskedLM` when it has no sentence head)."""
    from safetensors.numpy import save_file

    arrays = hf_arrays(model)
    if "predictions.bias" not in arrays:
        architecture = "AlbertModel"
        arrays = {key[len("albert."):]: value for key, value in arrays.items()}
    elif "sop_classifier.classifier.weight" in arrays:
        architecture = "AlbertForPreTraining"
    else:
        architecture = "AlbertForMaskedLM"
    config = config_to_hf(model.config, architecture)
    with staged_folder(output_dir, "albert-convert", {"to": "huggingface"}) as staging:
        save_file(arrays, os.path.join(staging, SAFETENSORS_FILE), metadata={"format": "pt"})
        with open(os.path.join(staging, CONFIG_FILE), "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2)
            f.write("\n")
        if spm_model:
            shutil.copyfile(spm_model, os.path.join(staging, TOKENIZER_FILE))
            with open(os.path.join(staging, "tokenizer_config.json"), "w",
                      encoding="utf-8") as f:
                json.dump({"tokenizer_class": "AlbertTokenizer", "do_lower_case": lower_case,
                           "remove_space": True, "keep_accents": False}, f, indent=2)
                f.write("\n")
    return os.path.join(os.path.abspath(output_dir), SAFETENSORS_FILE)

