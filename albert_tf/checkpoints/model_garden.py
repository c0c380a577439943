"""The Model Garden's ALBERT encoder (tf-models-official `networks.AlbertEncoder`) and ours.

The Model Garden encoder holds one all-shared transformer block (no groups, no inner groups).
Its attention kernels are EinsumDense tensors, `[H, heads, head_size]` for query/key/value and
`[heads, head_size, H]` for the output; the original layout (and ours) keeps them as `[H, H]`,
which is the same memory reshaped. `garden_arrays` lists a Model Garden encoder's weights under
the original names; `read_model_garden` does the same from a TF2 object checkpoint of one
(whatever root name it was saved under), after checking every variable's presence and shape.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import tensorflow as tf
import tf_keras

from albert_tf.checkpoints.original import GROUP_PREFIX
from albert_tf.checkpoints.reading import (
    CheckpointError,
    check_variables,
    checkpoint_shapes,
    read_arrays,
    resolve_checkpoint,
    trackable_variable_paths,
)
from albert_tf.config import AlbertConfig
from albert_tf.layers.activations import get_activation

_BLOCK = GROUP_PREFIX.format(group=0, inner=0)
# Model Garden weight name -> original name.
_GARDEN_TO_ORIGINAL = {
    "word_embeddings/embeddings": "bert/embeddings/word_embeddings",
    "position_embedding/embeddings": "bert/embeddings/position_embeddings",
    "type_embeddings/embeddings": "bert/embeddings/token_type_embeddings",
    "embeddings/layer_norm/gamma": "bert/embeddings/LayerNorm/gamma",
    "embeddings/layer_norm/beta": "bert/embeddings/LayerNorm/beta",
    "embedding_projection/kernel": "bert/encoder/embedding_hidden_mapping_in/kernel",
    "embedding_projection/bias": "bert/encoder/embedding_hidden_mapping_in/bias",
    **{f"transformer/self_attention/{part}/{kind}": f"{_BLOCK}attention_1/self/{part}/{kind}"
       for part in ("query", "key", "value") for kind in ("kernel", "bias")},
    **{f"transformer/self_attention/attention_output/{kind}":
       f"{_BLOCK}attention_1/output/dense/{kind}" for kind in ("kernel", "bias")},
    **{f"transformer/self_attention_layer_norm/{kind}": f"{_BLOCK}LayerNorm/{kind}"
       for kind in ("gamma", "beta")},
    **{f"transformer/intermediate/{kind}": f"{_BLOCK}ffn_1/intermediate/dense/{kind}"
       for kind in ("kernel", "bias")},
    **{f"transformer/output/{kind}": f"{_BLOCK}ffn_1/intermediate/output/dense/{kind}"
       for kind in ("kernel", "bias")},
    **{f"transformer/output_layer_norm/{kind}": f"{_BLOCK}LayerNorm_1/{kind}"
       for kind in ("gamma", "beta")},
    "pooler_transform/kernel": "bert/pooler/dense/kernel",
    "pooler_transform/bias": "bert/pooler/dense/bias",
}


def model_garden_encoder(config: AlbertConfig):
    """A Model Garden `AlbertEncoder` with `config`'s sizes, activation and dropout (the
    tanh GELU is the Model Garden's own, so benchmarks time it as its users run it)."""
    from official.modeling import activations
    from official.nlp.modeling import networks

    if config.sharing != "all" or config.num_groups != 1 or config.inner_group_num != 1:
        raise CheckpointError(
            "the Model Garden AlbertEncoder has one all-shared block: it needs sharing 'all', "
            f"num_groups 1 and inner_group_num 1, got sharing '{config.sharing}', num_groups "
            f"{config.num_groups}, inner_group_num {config.inner_group_num}")
    activation = (activations.gelu if config.hidden_activation == "gelu_tanh"
                  else get_activation(config.hidden_activation))
    return networks.AlbertEncoder(
        vocab_size=config.vocab_size, embedding_width=config.embedding_size,
        hidden_size=config.hidden_size, num_layers=config.num_layers,
        num_attention_heads=config.num_attention_heads,
        max_sequence_length=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size, intermediate_size=config.intermediate_size,
        activation=activation, dropout_rate=config.hidden_dropout,
        attention_dropout_rate=config.attention_dropout,
        initializer=tf_keras.initializers.TruncatedNormal(stddev=config.initializer_range),
        dict_outputs=True)


def _built_garden_encoder(config: AlbertConfig):
    encoder = model_garden_encoder(config)
    ids = tf.zeros((1, 2), tf.int32)
    encoder({"input_word_ids": ids, "input_mask": ids, "input_type_ids": ids})
    return encoder


def _weight_name(variable: tf.Variable) -> str:
    return variable.name.split(":")[0]


def _to_original(name: str, value: np.ndarray, hidden_size: int) -> tuple[str, np.ndarray]:
    if name not in _GARDEN_TO_ORIGINAL:
        raise CheckpointError(f"Model Garden weight '{name}' has no original name")
    if "self_attention/" in name:  # EinsumDense [H, heads, size] / [heads, size, H] -> [H, H]
        value = value.reshape(-1) if name.endswith("bias") else value.reshape(hidden_size, -1)
    return _GARDEN_TO_ORIGINAL[name], value


def garden_arrays(encoder) -> dict[str, np.ndarray]:
    """A built Model Garden AlbertEncoder's weights as {original name: array}."""
    hidden = encoder.get_config()["hidden_size"]
    return dict(_to_original(_weight_name(variable), variable.numpy(), hidden)
                for variable in encoder.weights)


def _root_prefix(shapes: Iterable[str], relative_key: str, path: str) -> str:
    candidates = sorted(key[: -len(relative_key)] for key in shapes
                        if key.endswith(relative_key))
    if len(candidates) != 1:
        found = ", ".join(repr(candidate) for candidate in candidates) or "none"
        raise CheckpointError(
            f"{path}: cannot find one Model Garden AlbertEncoder in this checkpoint (encoders "
            f"found under: {found}); it must be a tf.train.Checkpoint holding the encoder, "
            f"e.g. saved as tf.train.Checkpoint(encoder=encoder)")
    return candidates[0]


def read_model_garden(path: str, config: AlbertConfig) -> tuple[dict[str, np.ndarray], str]:
    """({original name: array}, checkpoint prefix) of a Model Garden AlbertEncoder object
    checkpoint whose encoder has `config`'s sizes."""
    prefix = resolve_checkpoint(path)
    encoder = _built_garden_encoder(config)
    relative = trackable_variable_paths(encoder)
    shapes = checkpoint_shapes(prefix)
    word_key = next(key for key, variable in relative.items()
                    if _weight_name(variable) == "word_embeddings/embeddings")
    root = _root_prefix(shapes, "/" + word_key, prefix) + "/"
    # Problems are reported by Model Garden weight name and checkpoint key.
    labels = {root + key: f"{_weight_name(variable)} ({root + key})"
              for key, variable in relative.items()}
    expected = {labels[root + key]: tuple(variable.shape) for key, variable in relative.items()}
    under_root = {labels.get(key, key): shape for key, shape in shapes.items()
                  if key.startswith(root)}
    check_variables(expected, under_root, prefix,
                    ignored=(r"\.OPTIMIZER_SLOT/", r"/\.ATTRIBUTES/(?!VARIABLE_VALUE)"))
    arrays = read_arrays(prefix, [root + key for key in relative])
    hidden = config.hidden_size
    return dict(_to_original(_weight_name(variable), arrays[root + key], hidden)
                for key, variable in relative.items()), prefix
