"""Exports an ALBERT model as a TensorFlow SavedModel that serves raw text.

Signatures (every output is float32 or int32, whatever the model's compute dtype):
    serving_default  text (tf.string `(batch,)`) -> pooled_output `(batch, H)`,
                     sequence_output `(batch, seq, H)`, input_word_ids / input_mask /
                     input_type_ids `(batch, seq)`, and a task model's outputs.
    serving_pairs    text, text_pair -> the same, packed `[CLS] a [SEP] b [SEP]` (an empty
                     text_pair packs its row as a single text).
    encode_ids       input_word_ids, input_mask, input_type_ids (int32 `(batch, seq)`) ->
                     pooled_output, sequence_output (the TF-Hub encoder interface).
    preprocess, preprocess_pairs
                     text (, text_pair) -> input_word_ids, input_mask, input_type_ids.
    serving_choices  (multiple-choice models) context, question, option (tf.string
                     `(rows,)`, one row per option) -> option_logits `(rows,)` (soft-max a
                     question's rows) and the rest, packed `[CLS] context [SEP]
                     question+option [SEP]` as `albert-finetune --task race` packs them (its
                     `max_qa_length`, recorded in albert_export.json);
                     `preprocess_choices` gives the ids alone.
    fill_mask        (models with the masked-LM head) text with literal "[MASK]"s ->
                     mask_positions `(batch, masks)` (-1 pads rows with fewer masks),
                     top_k_ids, top_k_pieces, top_k_probabilities `(batch, masks, k)`.
`seq` is the batch's longest packed row (at most `max_seq_length`), so short requests cost
less. Tokenization (tensorflow-text ops) runs outside the model function, which is
XLA-compiled when `jit_compile` is set.

A SavedModel signature has a fixed set of inputs, so pairs have their own signatures rather
than an optional input. The SentencePiece model is embedded in the graph (the op takes it as
an attribute) and also travels as the asset `assets/<name>.model`, for clients that tokenize
themselves; `assets.extra/albert_export.json` records the export options and model config.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Mapping

import tensorflow as tf

from albert_tf.checkpoints.staging import staged_folder
from albert_tf.export.loading import ExportError, register_text_ops
from albert_tf.export.model_outputs import (
    choice_facts,
    encoder_of,
    ids_specs,
    masked_lm_of,
    model_outputs,
)
from albert_tf.text.vocabulary import CLS_ID, MASK_ID, PAD_ID, SEP_ID

METADATA_FILE = "albert_export.json"
_NEVER_PREDICTED = (PAD_ID, CLS_ID, SEP_ID, MASK_ID)  # fill_mask skips these ids


@dataclasses.dataclass(frozen=True)
class ExportOptions:
    """How the SavedModel preprocesses and runs.

    Attributes:
        max_seq_length: longest packed row; longer texts are truncated. None: the model's
            `max_position_embeddings`.
        lower_case: lower-case text before SentencePiece (the released models are uncased).
        top_k: how many predictions `fill_mask` returns per mask.
        jit_compile: XLA-compile the model function (each new (batch, seq) shape compiles).
        pad_to_multiple_of: round the padded length up to this multiple, bounding the shapes
            an XLA-compiled model meets.
    """

    max_seq_length: int | None = None
    lower_case: bool = True
    top_k: int = 5
    jit_compile: bool = False
    pad_to_multiple_of: int = 1


def _text_spec(name: str) -> tf.TensorSpec:
    return tf.TensorSpec([None], tf.string, name=name)


class AlbertServing:
    """The serving functions of one model, and the `tf.Module` a SavedModel saves for them.

    Args:
        model: an `AlbertEncoder`, an `AlbertPretrainer` (adds `fill_mask`), or a task model:
            a Keras model with an `encoder` attribute whose call on the ids dict returns a dict
            holding `sequence_output`, `pooled_output` and its task outputs.
        spm_model: the SentencePiece `.model` the model was trained with.
        options: `ExportOptions`.
        max_qa_length: for a multiple-choice model, the question+option pieces its rows
            keep (`model_outputs.choice_facts`); None: no `serving_choices`.

    `signatures()` traces the functions once. `root()` holds only what they use: the model's
    variables, the SentencePiece resources and the asset. The Keras objects and the functions
    stay out of it: saving a tracked Keras model also traces and saves every layer's Keras call
    functions, and saving a tracked `tf.function` traces it again, which together tripled the
    time an export took; serving needs neither.
    """

    def __init__(self, model, spm_model: str, options: ExportOptions,
                 max_qa_length: int | None = None):
        register_text_ops()
        from albert_tf.preprocessing.graph_tokenizer import BYTES_PER_POSITION, AlbertTextTokenizer
        from albert_tf.preprocessing.packing import AlbertInputPacker

        self.model = model
        self.encoder = encoder_of(model)
        self.masked_lm = masked_lm_of(model)
        max_positions = self.encoder.config.max_position_embeddings
        if options.max_seq_length is None:
            options = dataclasses.replace(options, max_seq_length=max_positions)
        if options.max_seq_length > max_positions:
            raise ExportError(f"max_seq_length {options.max_seq_length} exceeds the model's "
                              f"max_position_embeddings {max_positions}")
        self.options = options
        self.max_qa_length = max_qa_length
        self.spm_model = spm_model
        self.tokenizer = AlbertTextTokenizer(
            spm_model, options.lower_case,
            max_input_bytes=BYTES_PER_POSITION * options.max_seq_length)
        if self.tokenizer.vocab_size != self.encoder.config.vocab_size:
            raise ExportError(f"{spm_model}: the SentencePiece model has "
                              f"{self.tokenizer.vocab_size} pieces but the model's vocab_size "
                              f"is {self.encoder.config.vocab_size}; pass the tokenizer the "
                              f"model was trained with")
        self.packer = AlbertInputPacker(options.max_seq_length, options.pad_to_multiple_of)
        candidates = self.encoder.config.vocab_size - len(_NEVER_PREDICTED)
        if self.masked_lm is not None and not 1 <= options.top_k <= candidates:
            raise ExportError(f"top_k must be between 1 and {candidates} (the vocabulary "
                              f"without pad/CLS/SEP/MASK), got {options.top_k}")
        self._run_model = tf.function(self._model_outputs, autograph=False,
                                      jit_compile=options.jit_compile)
        self._run_masked_lm = tf.function(self._masked_lm_probabilities, autograph=False,
                                          jit_compile=options.jit_compile)

    def root(self) -> tf.Module:
        root = tf.Module(name="albert_serving")
        root.model_variables = list(self.model.variables)
        root.tokenizer_resources = list(self.tokenizer.resources)
        root.sentencepiece_model = tf.saved_model.Asset(self.spm_model)
        return root

    def signatures(self) -> dict[str, Any]:
        """name -> traced concrete function, for `tf.saved_model.save(signatures=...)`."""
        text, text_pair = _text_spec("text"), _text_spec("text_pair")
        functions = {"serving_default": (self._serve, [text]),
                     "serving_pairs": (self._serve, [text, text_pair]),
                     "encode_ids": (self._encode_ids, [ids_specs()]),
                     "preprocess": (self._preprocess, [text]),
                     "preprocess_pairs": (self._preprocess, [text, text_pair])}
        if self.masked_lm is not None:
            functions["fill_mask"] = (self._fill_mask, [text])
        if self.max_qa_length is not None:
            choice = [_text_spec(name) for name in ("context", "question", "option")]
            functions["serving_choices"] = (self._serve_choices, choice)
            functions["preprocess_choices"] = (self._preprocess_choices, choice)
        return {name: tf.function(function, input_signature=spec,
                                  autograph=False).get_concrete_function()
                for name, (function, spec) in functions.items()}

    def _preprocess(self, *texts: tf.Tensor) -> dict[str, tf.Tensor]:
        return self.packer([self.tokenizer(text) for text in texts])

    def _serve(self, *texts: tf.Tensor) -> dict[str, tf.Tensor]:
        inputs = self._preprocess(*texts)
        return {**self._run_model(inputs), **inputs}

    def _preprocess_choices(self, context, question, option) -> dict[str, tf.Tensor]:
        from albert_tf.preprocessing.choices import pack_option_rows

        return pack_option_rows(self.tokenizer, self.packer, context, question, option,
                                self.max_qa_length)

    def _serve_choices(self, context, question, option) -> dict[str, tf.Tensor]:
        inputs = self._preprocess_choices(context, question, option)
        return {**self._run_model(inputs), **inputs}

    def _encode_ids(self, inputs: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        outputs = self._run_model(inputs)
        return {name: outputs[name] for name in ("pooled_output", "sequence_output")}

    def _model_outputs(self, inputs: dict[str, tf.Tensor]) -> dict[str, tf.Tensor]:
        return model_outputs(self.model, inputs)

    def _fill_mask(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        inputs = self.packer([self.tokenizer.tokenize_with_masks(text)])
        word_ids = inputs["input_word_ids"]
        positions = tf.ragged.boolean_mask(
            tf.broadcast_to(tf.range(tf.shape(word_ids)[1]), tf.shape(word_ids)),
            tf.equal(word_ids, MASK_ID)).to_tensor(default_value=-1)  # (batch, masks)
        probabilities = self._run_masked_lm(inputs, tf.maximum(positions, 0))
        never = tf.scatter_nd(tf.constant(_NEVER_PREDICTED)[:, None],
                              tf.ones(len(_NEVER_PREDICTED), tf.bool),
                              [self.encoder.config.vocab_size])
        top_probabilities, top_ids = tf.math.top_k(
            tf.where(never, -1.0, probabilities), k=self.options.top_k)
        valid = (positions >= 0)[:, :, None]
        return {"mask_positions": positions,
                "top_k_ids": tf.where(valid, top_ids, -1),
                "top_k_pieces": tf.where(valid, self.tokenizer.id_to_piece(top_ids), ""),
                "top_k_probabilities": tf.where(valid, top_probabilities, 0.0)}

    def _masked_lm_probabilities(self, inputs, positions):
        """Probabilities over the vocabulary at `positions`: `(batch, masks, vocab)`."""
        encoded = self.encoder(inputs, training=False)
        logits = self.masked_lm(encoded["sequence_output"], positions,
                                self.encoder.get_embedding_table())
        return tf.nn.softmax(tf.cast(logits, tf.float32), axis=-1)


def export_saved_model(model, spm_model: str, output_dir: str,
                       options: ExportOptions = ExportOptions(),
                       metadata: Mapping[str, Any] | None = None) -> str:
    """Writes `model` as a SavedModel in the new (or empty) folder `output_dir`, atomically.

    Args:
        model: see `AlbertServing`.
        spm_model: the model's SentencePiece `.model`.
        output_dir: where the SavedModel goes.
        options: `ExportOptions`.
        metadata: extra facts for `assets.extra/albert_export.json` (e.g. the source).
    Returns the absolute path of the SavedModel folder.
    """
    choices = choice_facts(model, metadata)
    serving = AlbertServing(model, spm_model, options, choices.get("max_qa_length"))
    signatures = serving.signatures()
    with staged_folder(output_dir, "albert-export", metadata) as staging:
        tf.saved_model.save(serving.root(), staging, signatures=signatures)
        os.makedirs(os.path.join(staging, "assets.extra"), exist_ok=True)
        facts = {**(metadata or {}), **choices, "options": dataclasses.asdict(serving.options),
                 "model_config": serving.encoder.config.to_dict(),
                 "signatures": sorted(signatures),
                 "compute_dtype": model.compute_dtype}
        with open(os.path.join(staging, "assets.extra", METADATA_FILE), "w",
                  encoding="utf-8") as f:
            json.dump(facts, f, indent=2)
            f.write("\n")
    return os.path.abspath(output_dir)
