"""What every export format runs on ids: a model's outputs, in float32, from the three id
inputs (`input_word_ids`, `input_mask`, `input_type_ids`, int32 `(batch_size, seq_length)`),
and the checks every format makes of what it is given.

The formats differ in what surrounds this (in-graph tokenization, LiteRT conversion, ONNX
conversion, the TF Hub layout); the model part is one function for all of them, so a
format's numbers can only differ through its runtime.
"""

from __future__ import annotations

from typing import Mapping

import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.config.finetuning import TaskDataConfig
from albert_tf.export.loading import ExportError
from albert_tf.models.encoder import INPUT_NAMES, AlbertEncoder
from albert_tf.models.pretrainer import AlbertPretrainer
from albert_tf.models.task_models import AlbertMultipleChoice
from albert_tf.text.vocabulary import SentencePieceTokenizer


def ids_specs() -> dict[str, tf.TensorSpec]:
    """The id inputs with any batch size and length."""
    return {name: tf.TensorSpec([None, None], tf.int32, name=name) for name in INPUT_NAMES}


def encoder_of(model) -> AlbertEncoder:
    """The encoder of an encoder, a pretrainer or a task model (its `encoder` attribute)."""
    return model if isinstance(model, AlbertEncoder) else model.encoder


def masked_lm_of(model):
    """The masked-LM head of a pretrainer, else None."""
    return model.masked_lm if isinstance(model, AlbertPretrainer) else None


def choice_facts(model, metadata: Mapping | None) -> dict[str, int]:
    """`{"max_qa_length": n}` for a multiple-choice model, else `{}`: how many pieces of
    question+option its packing keeps (the last ones), as its training did: the run's
    (`metadata["max_qa_length"]`, which `albert-export` reads from the run's config), a
    raw-text model's own, else RACE's default. Every export records it; the SavedModel and
    the ids client pack (context, question, option) rows with it."""
    if not isinstance(model, AlbertMultipleChoice):
        return {}
    given = (metadata or {}).get("max_qa_length") or getattr(model, "max_qa_length", None)
    return {"max_qa_length": int(given or TaskDataConfig.max_qa_length)}


def float32_outputs(outputs: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """The tensor outputs, floating ones cast to float32 (lists, such as per-layer outputs,
    are left out: a serving signature returns tensors)."""
    return {name: tf.cast(value, tf.float32) if value.dtype.is_floating else value
            for name, value in outputs.items() if isinstance(value, tf.Tensor)}


def model_outputs(model, inputs: Mapping[str, tf.Tensor]) -> dict[str, tf.Tensor]:
    """Inference outputs of `model` on the id inputs, float32.

    An encoder or a pretrainer gives `pooled_output` `(batch_size, hidden_size)` and
    `sequence_output` `(batch_size, seq_length, hidden_size)`; a task model gives those and
    its own (`logits`, `probabilities`, span logits, ...).
    """
    inputs = {name: inputs[name] for name in INPUT_NAMES}
    encoder = encoder_of(model)
    if model is encoder or masked_lm_of(model) is not None:
        outputs = encoder(inputs, training=False)
    else:  # a task model: its outputs include the encoder's
        outputs = model(inputs, training=False)
    return float32_outputs(outputs)


def all_layer_outputs(encoder: AlbertEncoder, inputs: Mapping[str, tf.Tensor],
                      training: bool = False) -> dict:
    """The encoder's outputs with `encoder_outputs`, every transformer block's output (a list
    of `(batch_size, seq_length, hidden_size)`), whether or not the encoder was built to return
    them: its layers are called one after another here."""
    embedded = encoder.embedding([inputs["input_word_ids"], inputs["input_type_ids"]],
                                 training=training)
    layers = encoder.transformer(embedded, input_mask=inputs["input_mask"], training=training)
    return {"sequence_output": layers[-1], "pooled_output": encoder.pooler(layers[-1]),
            "encoder_outputs": list(layers)}


def checked_tokenizer(spm_model: str, config: AlbertConfig,
                      max_seq_length: int) -> SentencePieceTokenizer:
    """The SentencePiece model, checked to be the model's (its size) and `max_seq_length`
    checked to fit the model's positions."""
    if not 3 <= max_seq_length <= config.max_position_embeddings:
        raise ExportError(f"max_seq_length {max_seq_length} must be between 3 and the model's "
                          f"max_position_embeddings {config.max_position_embeddings}")
    tokenizer = SentencePieceTokenizer(spm_model)
    if tokenizer.vocab_size != config.vocab_size:
        raise ExportError(f"{spm_model}: the SentencePiece model has {tokenizer.vocab_size} "
                          f"pieces but the model's vocab_size is {config.vocab_size}; pass "
                          f"the tokenizer the model was trained with")
    return tokenizer
