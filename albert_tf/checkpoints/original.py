"""The original ALBERT checkpoint layout (google-research/albert, TF1) and our model in it.

The original code names its variables `bert/embeddings/...`, `bert/encoder/transformer/
group_<g>/inner_group_<j>/...`, `bert/pooler/...` and `cls/predictions/...`,
`cls/seq_relationship/...` (`original_variables` lists every one). Every
other format in this package is converted through this layout: it names groups and inner
groups explicitly, so any all-shared ALBERT (N groups, inner blocks) and BERT (sharing
`none` = one group per layer) fits it. Sharing only the attention or only the feed-forward
sub-blocks (Table 5) has no original layout, and asking for one is an error.

Here the model's variables are listed under their original names (`original_variables`),
an original checkpoint is read into a model (`load_original`) and a model is written back
as an original checkpoint folder (`save_original`): `model.ckpt-<step>.{index,data-*}`, the
`checkpoint` state file and `albert_config.json`.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Iterable, Mapping, NamedTuple

import numpy as np
import tensorflow as tf

from albert_tf.checkpoints.original_config import read_original_config, to_original_config
from albert_tf.checkpoints.reading import (
    CheckpointError,
    check_finite,
    check_variables,
    checkpoint_shapes,
    read_arrays,
    resolve_checkpoint,
)
from albert_tf.checkpoints.staging import staged_folder, write_checkpoint_state
from albert_tf.config import AlbertConfig
from albert_tf.layers.shared_encoder import group_of_layer
from albert_tf.models.encoder import AlbertEncoder
from albert_tf.models.pretrainer import AlbertPretrainer

CONFIG_FILE = "albert_config.json"
GROUP_PREFIX = "bert/encoder/transformer/group_{group}/inner_group_{inner}/"
MLM_BIAS = "cls/predictions/output_bias"
SENTENCE_WEIGHTS = "cls/seq_relationship/output_weights"
# What original checkpoints hold besides the model: the step and optimizer slots.
TRAINING_STATE = (r"^global_step$", r"/adam_[mv]$", r"/lamb_[mv]$")


class OriginalVariable(NamedTuple):
    """One of our variables under its original name; `transposed`: stored as its transpose."""

    variable: tf.Variable
    transposed: bool = False

    @property
    def original_shape(self) -> tuple[int, ...]:
        shape = tuple(self.variable.shape)
        return shape[::-1] if self.transposed else shape


def original_group_count(config: AlbertConfig) -> int:
    """num_hidden_groups of the original layout holding `config`'s weights."""
    if config.sharing == "all":
        return config.num_groups
    if config.sharing == "none":  # BERT: every layer its own group
        return config.num_layers
    raise CheckpointError(
        f"sharing '{config.sharing}' (only the {config.sharing} sub-blocks shared) has no "
        f"original ALBERT layout, which shares whole layers within a group; save it in our "
        f"format instead")


def _dense(prefix: str, layer) -> dict[str, OriginalVariable]:
    return {prefix + "kernel": OriginalVariable(layer.kernel),
            prefix + "bias": OriginalVariable(layer.bias)}


def _layer_norm(prefix: str, layer) -> dict[str, OriginalVariable]:
    return {prefix + "gamma": OriginalVariable(layer.gamma),
            prefix + "beta": OriginalVariable(layer.beta)}


def _encoder_variables(encoder: AlbertEncoder) -> dict[str, OriginalVariable]:
    config = encoder.config
    embedding = encoder.embedding
    names = {
        "bert/embeddings/word_embeddings": OriginalVariable(embedding.word_embeddings),
        "bert/embeddings/token_type_embeddings": OriginalVariable(
            embedding.token_type_embeddings),
        "bert/embeddings/position_embeddings": OriginalVariable(embedding.position_embeddings),
        **_layer_norm("bert/embeddings/LayerNorm/", embedding.layer_norm),
    }
    if embedding.projection is not None:
        names.update(_dense("bert/encoder/embedding_hidden_mapping_in/", embedding.projection))
    num_groups = original_group_count(config)
    for group in range(num_groups):
        first_layer = next(layer for layer in range(config.num_layers)
                           if group_of_layer(layer, config.num_layers, num_groups) == group)
        for inner, (attention, feed_forward) in enumerate(
                encoder.transformer.blocks_of_layer(first_layer)):
            prefix = GROUP_PREFIX.format(group=group, inner=inner)
            for part in ("query", "key", "value"):
                names.update(_dense(f"{prefix}attention_1/self/{part}/",
                                    getattr(attention, part)))
            names.update(_dense(f"{prefix}attention_1/output/dense/", attention.output_dense))
            names.update(_layer_norm(f"{prefix}LayerNorm/", attention.layer_norm))
            names.update(_dense(f"{prefix}ffn_1/intermediate/dense/", feed_forward.intermediate))
            names.update(_dense(f"{prefix}ffn_1/intermediate/output/dense/",
                                feed_forward.output_dense))
            names.update(_layer_norm(f"{prefix}LayerNorm_1/", feed_forward.layer_norm))
    names.update(_dense("bert/pooler/dense/", encoder.pooler.dense))
    return names


def original_variables(model: AlbertEncoder | AlbertPretrainer) -> dict[str, OriginalVariable]:
    """{original name: our variable} for a built encoder or pretrainer (heads included)."""
    if isinstance(model, AlbertEncoder):
        return _encoder_variables(model)
    names = _encoder_variables(model.encoder)
    head = model.masked_lm
    names.update(_dense("cls/predictions/transform/dense/", head.transform))
    names.update(_layer_norm("cls/predictions/transform/LayerNorm/", head.layer_norm))
    names[MLM_BIAS] = OriginalVariable(head.output_bias)
    if model.sentence_head is not None:
        names[SENTENCE_WEIGHTS] = OriginalVariable(model.sentence_head.dense.kernel,
                                                   transposed=True)
        names["cls/seq_relationship/output_bias"] = OriginalVariable(
            model.sentence_head.dense.bias)
    return names


def variable_array(variable: tf.Variable, transposed: bool = False) -> np.ndarray:
    """A float32 copy of `variable`, transposed on request (by TensorFlow: a contiguous
    result, many times faster than numpy's strided copy of a large kernel)."""
    value = tf.transpose(variable) if transposed else tf.identity(variable)
    return tf.cast(value, tf.float32).numpy()


def original_arrays(model: AlbertEncoder | AlbertPretrainer) -> dict[str, np.ndarray]:
    """The model's weights as {original name: float32 array in the original layout}."""
    return {name: variable_array(entry.variable, entry.transposed)
            for name, entry in original_variables(model).items()}


def assign_original_arrays(model: AlbertEncoder | AlbertPretrainer,
                           arrays: Mapping[str, np.ndarray], source: str,
                           ignored: Iterable[str] = TRAINING_STATE) -> None:
    """Loads {original name: array} into `model`, after checking every name and shape
    (a CheckpointError lists all problems, NaN and infinity included; nothing is assigned
    then)."""
    variables = original_variables(model)
    check_variables({name: entry.original_shape for name, entry in variables.items()},
                    {name: tuple(np.shape(array)) for name, array in arrays.items()},
                    source, ignored)
    check_finite({name: arrays[name] for name in variables}, source)
    for name, entry in variables.items():
        value = tf.cast(arrays[name], entry.variable.dtype)
        entry.variable.assign(tf.transpose(value) if entry.transposed else value)


def build_model(config: AlbertConfig, masked_lm: bool, sentence_objective: str,
                sequence_length: int = 8, return_all_layer_outputs: bool = False
                ) -> AlbertEncoder | AlbertPretrainer:
    """A built model with the parts a checkpoint holds: the encoder alone (no MLM head), or
    the pretrainer with its MLM head and, unless `sentence_objective` is none, the sentence
    head."""
    ids = np.zeros((1, sequence_length), np.int32)
    inputs = {"input_word_ids": ids, "input_mask": ids, "input_type_ids": ids}
    if not masked_lm:
        model = AlbertEncoder(config, return_all_layer_outputs)
    else:
        model = AlbertPretrainer(config, sentence_objective, return_all_layer_outputs)
        inputs["masked_lm_positions"] = ids[:, :1]
    model(inputs, training=False)
    return model


def original_heads(names: Iterable[str]) -> tuple[bool, bool]:
    """(has the MLM head, has the sentence head) in a checkpoint with these names."""
    names = set(names)
    return MLM_BIAS in names, SENTENCE_WEIGHTS in names


def _prefix_and_config(path: str, config: AlbertConfig | None) -> tuple[str, AlbertConfig]:
    prefix = resolve_checkpoint(path)
    if config is None:
        config_path = os.path.join(os.path.dirname(prefix), CONFIG_FILE)
        if not tf.io.gfile.exists(config_path):
            raise CheckpointError(f"{prefix}: no {CONFIG_FILE} beside the checkpoint; pass "
                                  f"the model config (--config)")
        config = read_original_config(config_path)
    return prefix, config


def read_original(path: str, config: AlbertConfig | None = None, sentence_objective: str = "sop",
                  ignored: Iterable[str] = ()):
    """(unloaded model, {original name: array}, checkpoint prefix) of an original checkpoint
    (`global_step` included when it has one), every variable checked against the model
    `config` describes before any is read.

    Args:
        path: a folder (`model.ckpt-*` files and `albert_config.json`), a checkpoint prefix
            or its `.index` file.
        config: the model config; default: `albert_config.json` beside the checkpoint.
        sentence_objective: the sentence head's objective, when the checkpoint has one.
        ignored: extra regular expressions for variables to skip (e.g. a fine-tuned
            checkpoint's task head), besides the step and optimizer slots.

    The model is an `AlbertPretrainer` when the checkpoint has the MLM head, else an
    `AlbertEncoder`.
    """
    prefix, config = _prefix_and_config(path, config)
    shapes = checkpoint_shapes(prefix)
    has_mlm, has_sentence = original_heads(shapes)
    model = build_model(config, has_mlm, sentence_objective if has_sentence else "none")
    expected = original_variables(model)
    check_variables({name: entry.original_shape for name, entry in expected.items()}, shapes,
                    prefix, (*TRAINING_STATE, *ignored))
    # The step travels with the weights (the assignment skips it as training state).
    step = ["global_step"] if "global_step" in shapes else []
    return model, read_arrays(prefix, [*expected, *step]), prefix


def load_original(path: str, config: AlbertConfig | None = None, sentence_objective: str = "sop",
                  ignored: Iterable[str] = ()):
    """(model, config, global step) from an original checkpoint (see `read_original`; the
    released ALBERT models were trained with SOP)."""
    model, arrays, prefix = read_original(path, config, sentence_objective, ignored)
    assign_original_arrays(model, arrays, prefix)
    return model, model.config, int(arrays.get("global_step", 0))


def write_name_based_checkpoint(prefix: str, arrays: Mapping[str, np.ndarray]) -> None:
    """Writes {name: array} as a name-based (TF1 `Saver`-style) checkpoint at `prefix`."""
    names = sorted(arrays)
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[tf.constant(arrays[name]) for name in names])


def save_original(model: AlbertEncoder | AlbertPretrainer, output_dir: str, global_step: int = 0,
                  spm_model: str | None = None) -> str:
    """Writes `model` as an original ALBERT checkpoint folder; returns the checkpoint prefix.

    The folder is assembled under a temporary name and renamed into place at the end
    (`staged_folder`), so an interrupted save leaves no half-written checkpoint.
    """
    arrays = original_arrays(model)  # fails first on a layout the original cannot hold
    config_json = to_original_config(model.config)
    arrays["global_step"] = np.asarray(global_step, np.int64)
    name = f"model.ckpt-{global_step}"
    with staged_folder(output_dir, "albert-convert", {"to": "original"}) as staging:
        write_name_based_checkpoint(os.path.join(staging, name), arrays)
        write_checkpoint_state(staging, name)
        with open(os.path.join(staging, CONFIG_FILE), "w", encoding="utf-8") as f:
            json.dump(config_json, f, indent=2)
            f.write("\n")
        if spm_model:
            shutil.copyfile(spm_model, os.path.join(staging, os.path.basename(spm_model)))
    return os.path.join(os.path.abspath(output_dir), name)
