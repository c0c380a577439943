"""Exports an ALBERT model as the TF Hub text pair: a preprocessor and an encoder SavedModel.

TF Hub's text models (`albert_en_preprocess` + `albert_en_base`, the BERT family) split
serving in two, so the tokenizer runs in the input pipeline and the encoder in the model:

    preprocessor/   no variables.
        __call__(text)            tf.string `(batch,)` -> `input_word_ids`, `input_mask`,
                                  `input_type_ids` int32 `(batch, default_seq_length)`.
        tokenize(text)            -> int32 `tf.RaggedTensor` `(batch, (pieces))`.
        bert_pack_inputs(segments, seq_length=default_seq_length)
                                  one or two tokenized segments (ragged rank 1 or 2) -> the
                                  three inputs, `(batch, seq_length)`; truncated as the
                                  original `run_classifier.py` did.
        tokenize.get_special_tokens_dict()
                                  vocab_size, start_of_sequence_id, end_of_segment_id,
                                  padding_id, mask_id.
    encoder/        the encoder's variables, trainable.
        __call__(inputs, training=False)
                                  the three inputs -> `pooled_output` `(batch, H)`,
                                  `default` (the same), `sequence_output` `(batch, seq, H)`,
                                  `encoder_outputs` (every block's output, a list); float32.
        variables, trainable_variables, regularization_losses (the Reusable SavedModel API
        `hub.KerasLayer(..., trainable=True)` fine-tunes through).

Both keep a `serving_default` signature for TF Serving; both need the tensorflow-text ops
(`import tensorflow_text`) only for the preprocessor. The tokenizer is albert-tf's own
(`AlbertTextTokenizer`: the Python tokenizer's ids, see `saved_model`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Mapping

import tensorflow as tf

from albert_tf.checkpoints.staging import staged_folder
from albert_tf.export.loading import register_text_ops
from albert_tf.export.model_outputs import (
    all_layer_outputs,
    checked_tokenizer,
    encoder_of,
    ids_specs,
)
from albert_tf.text.vocabulary import CLS_ID, MASK_ID, PAD_ID, SEP_ID

PREPROCESSOR, ENCODER = "preprocessor", "encoder"
METADATA_FILE = "albert_export.json"


@dataclasses.dataclass(frozen=True)
class HubOptions:
    """Attributes:
        default_seq_length: the preprocessor's output length when called on text, and
            `bert_pack_inputs`' default; at most the model's `max_position_embeddings`.
        lower_case: lower-case text before SentencePiece.
    """

    default_seq_length: int
    lower_case: bool = True


def _object(**attributes) -> tf.train.Checkpoint:
    """A trackable object holding `attributes` (functions, variables, assets) for a
    SavedModel; unlike `tf.Module`, it may hold attributes named `variables`."""
    holder = tf.train.Checkpoint()
    for name, value in attributes.items():
        setattr(holder, name, value)
    return holder


def _text_spec() -> tf.TensorSpec:
    return tf.TensorSpec([None], tf.string, name="text")


def preprocessor_object(spm_model: str, options: HubOptions,
                        max_positions: int) -> tf.train.Checkpoint:
    """The preprocessor's root object (see the module docstring); texts are cut to the bytes
    `max_positions` pieces can come from before tokenizing (`AlbertTextTokenizer`)."""
    register_text_ops()
    from albert_tf.preprocessing.graph_tokenizer import BYTES_PER_POSITION, AlbertTextTokenizer
    from albert_tf.preprocessing.packing import pack_segments

    tokenizer = AlbertTextTokenizer(spm_model, options.lower_case,
                                    max_input_bytes=BYTES_PER_POSITION * max_positions)
    default_length = options.default_seq_length

    def pack(segments, seq_length=default_length):
        segments = [segment.merge_dims(-2, -1) if segment.ragged_rank == 2 else segment
                    for segment in segments]
        return pack_segments(segments, seq_length, fixed_length=True)

    # The functions call one another, so each graph is saved once (the tokenizer's is large).
    tokenize_function = tf.function(tokenizer, input_signature=[_text_spec()], autograph=False)
    pack_function = tf.function(pack, autograph=False)
    for count in (1, 2):
        for ragged_rank in (1, 2):
            pack_function.get_concrete_function(
                [tf.RaggedTensorSpec([None] * (ragged_rank + 1), tf.int32)] * count,
                tf.TensorSpec([], tf.int32, name="seq_length"))
    special = {"vocab_size": tokenizer.vocab_size, "start_of_sequence_id": CLS_ID,
               "end_of_segment_id": SEP_ID, "padding_id": PAD_ID, "mask_id": MASK_ID}
    tokenize = _object(
        __call__=tokenize_function,
        get_special_tokens_dict=_object(__call__=tf.function(
            lambda: {name: tf.constant(value) for name, value in special.items()},
            input_signature=[])))
    return _object(
        __call__=tf.function(lambda text: pack_function([tokenize_function(text)]),
                             input_signature=[_text_spec()], autograph=False),
        tokenize=tokenize, bert_pack_inputs=_object(__call__=pack_function),
        tokenizer_resources=list(tokenizer.resources),
        sp_model_file=tf.saved_model.Asset(spm_model))


def encoder_object(model, spm_model: str) -> tf.train.Checkpoint:
    """The encoder's root object (see the module docstring)."""
    encoder = encoder_of(model)

    def call(inputs, training=False):
        outputs = all_layer_outputs(encoder, inputs, training)
        outputs = tf.nest.map_structure(lambda value: tf.cast(value, tf.float32), outputs)
        return {**outputs, "default": outputs["pooled_output"]}

    call_function = tf.function(call, autograph=False)
    for training in (False, True):
        call_function.get_concrete_function(ids_specs(), training)
    return _object(__call__=call_function, variables=list(encoder.variables),
                   trainable_variables=list(encoder.trainable_variables),
                   regularization_losses=[], sp_model_file=tf.saved_model.Asset(spm_model))


def _signature(function, *specs):
    """A `serving_default` signature: `function` on `specs`, tensor outputs only."""
    def flat(*args):
        return {name: value for name, value in function(*args).items()
                if isinstance(value, tf.Tensor)}

    return tf.function(flat, input_signature=list(specs),
                       autograph=False).get_concrete_function()


def export_hub(model, spm_model: str, output_dir: str, options: HubOptions,
               metadata: Mapping[str, Any] | None = None) -> str:
    """Writes `output_dir/preprocessor` and `output_dir/encoder` (see the module docstring),
    atomically, with `albert_export.json` beside them. Returns the folder's absolute path."""
    config = encoder_of(model).config
    checked_tokenizer(spm_model, config, options.default_seq_length)
    preprocessor = preprocessor_object(spm_model, options, config.max_position_embeddings)
    encoder = encoder_object(model, spm_model)
    with staged_folder(output_dir, "albert-export", {"format": "hub"}) as staging:
        tf.saved_model.save(preprocessor, os.path.join(staging, PREPROCESSOR), signatures={
            "serving_default": _signature(preprocessor.__call__, _text_spec())})
        tf.saved_model.save(encoder, os.path.join(staging, ENCODER), signatures={
            "serving_default": _signature(lambda inputs: encoder.__call__(inputs, False),
                                          ids_specs())})
        facts = {**(metadata or {}), "format": "hub", **dataclasses.asdict(options),
                 "model_config": config.to_dict(), "compute_dtype": model.compute_dtype}
        with open(os.path.join(staging, METADATA_FILE), "w", encoding="utf-8") as file:
            json.dump(facts, file, indent=2)
            file.write("\n")
    return os.path.abspath(output_dir)
