"""The Keras 3 side of `albert-convert --to keras_hub` / `--from keras_hub`, run as its own
process (the rest of the package is tf_keras; the two Keras never share a process here).

    python -m albert_tf.checkpoints.keras_hub_worker write ARRAYS.npz CONFIG.json FOLDER [SPM]
    python -m albert_tf.checkpoints.keras_hub_worker read FOLDER ARRAYS.npz CONFIG.json

`write` builds `keras_hub.models.AlbertBackbone` from the keras-hub config in CONFIG.json,
sets its weights from ARRAYS.npz (original ALBERT names and layouts, as
`checkpoints.original.original_arrays` gives them) and saves a preset folder with keras-hub's
own `save_to_preset` (config, weights, and the tokenizer when a SentencePiece model is
given). `read` loads a preset folder and writes its config and weights back the same way.
Only numpy and keras-hub are used here.
"""

from __future__ import annotations

import json
import sys

import numpy as np

GROUP = "bert/encoder/transformer/group_{group}/inner_group_{inner}/"


def _weight_map(backbone) -> dict[str, tuple]:
    """{original name: (keras-hub variable, its shape as the original stores it)}."""
    hidden = backbone.hidden_dim
    pairs = {
        "bert/embeddings/word_embeddings": backbone.token_embedding.embeddings,
        "bert/embeddings/position_embeddings":
            backbone.position_embedding.position_embeddings,
        "bert/embeddings/token_type_embeddings": backbone.segment_embedding.embeddings,
        "bert/embeddings/LayerNorm/gamma": backbone.embeddings_layer_norm.gamma,
        "bert/embeddings/LayerNorm/beta": backbone.embeddings_layer_norm.beta,
        "bert/encoder/embedding_hidden_mapping_in/kernel":
            backbone.embeddings_projection.kernel,
        "bert/encoder/embedding_hidden_mapping_in/bias": backbone.embeddings_projection.bias,
        "bert/pooler/dense/kernel": backbone.pooled_dense.kernel,
        "bert/pooler/dense/bias": backbone.pooled_dense.bias,
    }
    mapping = {name: (variable, tuple(variable.shape)) for name, variable in pairs.items()}
    for group, inner_layers in enumerate(backbone.transformer_layers):
        for inner, layer in enumerate(inner_layers):
            prefix = GROUP.format(group=group, inner=inner)
            attention = layer._self_attention_layer
            for part, dense in (("query", attention._query_dense),
                                ("key", attention._key_dense),
                                ("value", attention._value_dense)):
                # keras-hub splits the heads: kernel (H, heads, head), bias (heads, head).
                mapping[f"{prefix}attention_1/self/{part}/kernel"] = (dense.kernel,
                                                                      (hidden, hidden))
                mapping[f"{prefix}attention_1/self/{part}/bias"] = (dense.bias, (hidden,))
            output = attention._output_dense  # kernel (heads, head, H)
            mapping[f"{prefix}attention_1/output/dense/kernel"] = (output.kernel,
                                                                   (hidden, hidden))
            mapping[f"{prefix}attention_1/output/dense/bias"] = (output.bias, (hidden,))
            for name, norm in (("LayerNorm", layer._self_attention_layer_norm),
                               ("LayerNorm_1", layer._feedforward_layer_norm)):
                mapping[f"{prefix}{name}/gamma"] = (norm.gamma, tuple(norm.gamma.shape))
                mapping[f"{prefix}{name}/beta"] = (norm.beta, tuple(norm.beta.shape))
            for name, dense in (("ffn_1/intermediate/dense",
                                 layer._feedforward_intermediate_dense),
                                ("ffn_1/intermediate/output/dense",
                                 layer._feedforward_output_dense)):
                mapping[f"{prefix}{name}/kernel"] = (dense.kernel, tuple(dense.kernel.shape))
                mapping[f"{prefix}{name}/bias"] = (dense.bias, tuple(dense.bias.shape))
    return mapping


def write(arrays_path: str, config_path: str, output_dir: str, spm_model: str | None) -> None:
    import keras_hub

    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    arrays = dict(np.load(arrays_path))
    backbone = keras_hub.models.AlbertBackbone(**config)
    for name, (variable, _) in _weight_map(backbone).items():
        variable.assign(np.reshape(arrays[name], tuple(variable.shape)))
    backbone.save_to_preset(output_dir)
    if spm_model:
        keras_hub.models.AlbertTokenizer(proto=spm_model).save_to_preset(output_dir)


def read(preset_dir: str, arrays_path: str, config_path: str) -> None:
    import keras_hub

    backbone = keras_hub.models.AlbertBackbone.from_preset(preset_dir)
    arrays = {name: np.reshape(np.asarray(variable.numpy(), np.float32), shape)
              for name, (variable, shape) in _weight_map(backbone).items()}
    np.savez(arrays_path, **arrays)
    keys = ("vocabulary_size", "num_layers", "num_heads", "embedding_dim", "hidden_dim",
            "intermediate_dim", "num_groups", "num_inner_repetitions", "dropout",
            "max_sequence_length", "num_segments")
    config = backbone.get_config()
    with open(config_path, "w", encoding="utf-8") as f:
        json.dump({key: config[key] for key in keys}, f)


def main(argv: list[str]) -> int:
    command, *arguments = argv
    if command == "write" and len(arguments) in (3, 4):
        write(*arguments[:3], arguments[3] if len(arguments) == 4 else None)
    elif command == "read" and len(arguments) == 3:
        read(*arguments)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
