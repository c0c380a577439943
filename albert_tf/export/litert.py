"""Exports an ALBERT model to LiteRT (the TFLite format), ids in, for phones and edge boxes.

The folder `export_litert` writes:
    model.tflite        signature `serving_default`: `input_word_ids`, `input_mask`,
                        `input_type_ids` int32 `(batch, seq)` -> float32 `pooled_output`
                        `(batch, H)`, `sequence_output` `(batch, seq, H)` and a task model's
                        outputs; any batch size, seq from 1 to `max_seq_length`.
    <name>.model        the SentencePiece model the ids come from.
    albert_client.py    a client that turns raw text into those ids exactly as albert-tf's
                        Python tokenizer does and runs the model (`client`).
    albert_export.json  what the client reads (lengths, case, special and digit-comma ids)
                        and how the file was made (source, quantization, model config).

The file takes ids rather than text: ALBERT's normalization runs on TensorFlow string ops
that LiteRT has no kernels for, and the SentencePiece kernel LiteRT does have
(tensorflow-text's `FastSentencepieceTokenize`) gave other ids than SentencePiece on a line
in 36,802 of real prose (benchmarks/results/fast_sentencepiece.md), so a raw-text file would
not give the Python tokenizer's ids. It needs only LiteRT's builtin ops (no TensorFlow, no
tensorflow-text registrar).

Quantizations (`quantize`), all with float32 inputs and outputs around them:
    none          float32 weights and compute.
    float16       float16 weights, dequantized to float32 when loaded (half the file).
    dynamic_int8  int8 weights; matmuls quantize activations on the fly (a quarter).
    int8          full-integer: int8 weights and activations, with activation ranges
                  calibrated on `representative` examples (`representative_inputs`).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import tensorflow as tf

from albert_tf.config.export_formats import QUANTIZATIONS
from albert_tf.export.client_files import write_ids_folder
from albert_tf.export.loading import ExportError
from albert_tf.export.model_outputs import (
    checked_tokenizer,
    choice_facts,
    encoder_of,
    ids_specs,
    model_outputs,
)

MODEL_FILE = "model.tflite"


@dataclasses.dataclass(frozen=True)
class LiteRTOptions:
    """How the LiteRT file is made.

    Attributes:
        max_seq_length: the longest input the client packs and accepts; at most the model's
            `max_position_embeddings`.
        lower_case: lower-case text before SentencePiece (the released models are uncased).
        quantize: one of `QUANTIZATIONS`.
    """

    max_seq_length: int
    lower_case: bool = True
    quantize: str = "none"


def convert(model, quantize: str = "none",
            representative: Sequence[Mapping[str, np.ndarray]] | None = None) -> bytes:
    """The LiteRT flatbuffer of `model`'s id signature (see the module docstring).

    Args:
        model: an encoder, a pretrainer (its encoder is converted) or a task model.
        quantize: one of `QUANTIZATIONS`.
        representative: for `int8`, id-input dicts of real examples, int32 `(1, length)`.
    """
    if quantize not in QUANTIZATIONS:
        raise ExportError(f"quantize must be one of {', '.join(QUANTIZATIONS)}, got "
                          f"{quantize!r}")
    if quantize == "int8" and not representative:
        raise ExportError("quantize int8 calibrates activation ranges on real examples: "
                          "pass representative data (pretraining shards or a task folder)")
    root = tf.Module(name="albert_litert")
    root.model_variables = list(model.variables)
    serve = tf.function(lambda inputs: model_outputs(model, inputs),
                        input_signature=[ids_specs()], autograph=False)
    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [serve.get_concrete_function()], root)
    if quantize != "none":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if quantize == "float16":
        converter.target_spec.supported_types = [tf.float16]
    elif quantize == "int8":
        converter.representative_dataset = lambda: iter(representative)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    with warnings.catch_warnings():
        # int8 calibration runs the model in TensorFlow's own tf.lite.Interpreter, which
        # warns that it is deprecated in favour of ai-edge-litert's: TensorFlow's converter
        # calls it, not this package or the file's users, so the warning says nothing to them.
        warnings.filterwarnings("ignore", r"\s*Warning: tf\.lite\.Interpreter is deprecated",
                                UserWarning)
        return converter.convert()


def export_litert(model, spm_model: str, output_dir: str, options: LiteRTOptions,
                  representative: Sequence[Mapping[str, np.ndarray]] | None = None,
                  metadata: Mapping[str, Any] | None = None) -> str:
    """Writes the LiteRT folder described in the module docstring, atomically
    (`client_files`).

    Args:
        model: an encoder, a pretrainer or a task model.
        spm_model: the SentencePiece `.model` the model was trained with.
        output_dir: a new (or empty) folder.
        options: `LiteRTOptions`.
        representative: calibration examples for `quantize="int8"`.
        metadata: extra facts for `albert_export.json` (e.g. the source).
    Returns the absolute path of the folder.
    """
    config = encoder_of(model).config
    tokenizer = checked_tokenizer(spm_model, config, options.max_seq_length)
    facts = {**(metadata or {}), **choice_facts(model, metadata), "format": "tflite",
             "quantize": options.quantize,
             "model_config": config.to_dict(), "compute_dtype": model.compute_dtype}
    return write_ids_folder(output_dir, MODEL_FILE,
                            convert(model, options.quantize, representative), spm_model,
                            tokenizer, options.max_seq_length, options.lower_case, facts)
