"""Exports an ALBERT model to ONNX, ids in, through tf2onnx; onnxruntime runs it.

The folder holds `model.onnx` (inputs `input_word_ids`, `input_mask`, `input_type_ids` int32
`(batch, sequence)`; outputs float32 `pooled_output` `(batch, H)`, `sequence_output`
`(batch, sequence, H)` and a task model's outputs; both axes dynamic, named `batch` and
`sequence`), the SentencePiece model, the client `albert_client.py` (raw text -> the Python
tokenizer's ids -> onnxruntime) and `albert_export.json` (`client_files`).

Text cannot go in: ALBERT's normalization and SentencePiece are TensorFlow and
tensorflow-text ops that tf2onnx has no ONNX equivalent for (ONNX's standard ops have no
SentencePiece). tf2onnx is an extra: `pip install "albert-tf[onnx]"`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import tensorflow as tf

from albert_tf.export.client_files import write_ids_folder
from albert_tf.export.loading import ExportError
from albert_tf.export.model_outputs import (
    checked_tokenizer,
    choice_facts,
    encoder_of,
    model_outputs,
)
from albert_tf.models.encoder import INPUT_NAMES

MODEL_FILE = "model.onnx"
OPSET = 17  # onnxruntime 1.20 and later run it; tf2onnx 1.17 writes up to 18


@dataclasses.dataclass(frozen=True)
class OnnxOptions:
    """Attributes:
        max_seq_length: the longest input the client packs; at most the model's
            `max_position_embeddings` (the ONNX model itself takes any length up to it).
        lower_case: lower-case text before SentencePiece.
    """

    max_seq_length: int
    lower_case: bool = True


def convert(model) -> bytes:
    """The serialized ONNX model of `model`'s id signature (see the module docstring)."""
    try:
        import tf2onnx
    except ImportError as error:
        raise ExportError(f"--format onnx needs tf2onnx and onnxruntime ({error}): "
                          f"pip install \"albert-tf[onnx]\"") from None

    def serve(input_word_ids, input_mask, input_type_ids):
        return model_outputs(model, {"input_word_ids": input_word_ids,
                                     "input_mask": input_mask,
                                     "input_type_ids": input_type_ids})

    specs = [tf.TensorSpec([None, None], tf.int32, name=name) for name in INPUT_NAMES]
    proto, _ = tf2onnx.convert.from_function(tf.function(serve, autograph=False),
                                             input_signature=specs, opset=OPSET)
    _name_dynamic_axes(proto)
    return proto.SerializeToString()


def _name_dynamic_axes(proto) -> None:
    """tf2onnx calls every unknown dimension `unk__N`; say which is the batch and which the
    sequence (an output's second axis, when unknown, is the sequence: span logits,
    `sequence_output`)."""
    for value in [*proto.graph.input, *proto.graph.output]:
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            if axis < 2 and not dim.HasField("dim_value"):
                dim.dim_param = ("batch", "sequence")[axis]


def export_onnx(model, spm_model: str, output_dir: str, options: OnnxOptions,
                metadata: Mapping[str, Any] | None = None) -> str:
    """Writes the ONNX folder described in the module docstring, atomically; returns its
    absolute path."""
    config = encoder_of(model).config
    tokenizer = checked_tokenizer(spm_model, config, options.max_seq_length)
    facts = {**(metadata or {}), **choice_facts(model, metadata), "format": "onnx",
             "opset": OPSET,
             "model_config": config.to_dict(), "compute_dtype": model.compute_dtype}
    return write_ids_folder(output_dir, MODEL_FILE, convert(model), spm_model, tokenizer,
                            options.max_seq_length, options.lower_case, facts)
