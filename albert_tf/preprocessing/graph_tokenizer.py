"""AlbertTextTokenizer: raw strings -> ALBERT SentencePiece ids, inside the TensorFlow graph."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text
import tf_keras
from tensorflow_text.python.ops import sentencepiece_tokenizer as tf_text_sentencepiece

from albert_tf.preprocessing.graph_normalization import (
    non_whitespace_class,
    normalize_text,
    valid_utf8,
    whitespace_class,
)
from albert_tf.preprocessing.packing import column
from albert_tf.text.sentencepiece_proto import without_dummy_prefix
from albert_tf.text.vocabulary import MASK_ID, SentencePieceTokenizer
from albert_tf.tokenization import MASK_TEXT

BYTES_PER_POSITION = 128


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class AlbertTextTokenizer(tf_keras.layers.Layer):
    """Tokenizes text exactly as `albert_tf.tokenization.AlbertTokenizer` does, in the graph.

    Invalid UTF-8 is replaced by U+FFFD, the text is normalized (`normalization.normalize_text`),
    encoded by tensorflow-text's `SentencepieceTokenizer`, and pieces that end in a digit and a
    comma ("1990,") are split into the number's pieces and "," as the original tokenizer did
    (one gather through a table built here from the vocabulary).

    Args:
        spm_model: path of an ALBERT SentencePiece `.model` (checked for the ALBERT id layout),
            or its bytes. The bytes are embedded in the graph (the tensorflow-text op takes the
            model as an attribute), so a SavedModel does not need the file to run.
        lower_case: lower-case the text (the released models are uncased).
        max_input_bytes: if set, a longer text is cut to this many bytes, back to its last
            whitespace, before anything else (a 10 MB request then costs what a 64 KB one
            does). Use enough bytes for the pieces you keep: `AlbertInputPacker` keeps
            `max_seq_length`, and `BYTES_PER_POSITION * max_seq_length` covers them for any
            text whose pieces average under 128 bytes (SentencePiece's default longest
            piece is 16 characters).

    Call: `text` tf.string `(batch_size,)` -> int32 `tf.RaggedTensor` `(batch_size, (pieces))`,
    no [CLS]/[SEP] added.
    """

    def __init__(self, spm_model: str | os.PathLike | bytes, lower_case: bool = True,
                 max_input_bytes: int | None = None, **kwargs):
        kwargs["trainable"] = False
        super().__init__(**kwargs)
        self.spm_model = spm_model if isinstance(spm_model, bytes) else os.fspath(spm_model)
        self.lower_case = lower_case
        self.max_input_bytes = max_input_bytes
        python_tokenizer = SentencePieceTokenizer(self.spm_model)  # checks the id layout
        self.vocab_size = python_tokenizer.vocab_size
        self.proto = python_tokenizer.proto
        proto = python_tokenizer.processor.serialized_model_proto()
        self._sentencepiece = _sentencepiece_tokenizer(proto)
        # For text that continues a word (after a "[MASK]" with no space before it).
        self._continuation = _sentencepiece_tokenizer(without_dummy_prefix(proto))
        self._digit_comma_table = _digit_comma_table(python_tokenizer)

    def call(self, text: tf.Tensor) -> tf.RaggedTensor:
        return self._encode(self._valid_prefix(text), self._sentencepiece)

    def _valid_prefix(self, text: tf.Tensor) -> tf.Tensor:
        """`text` cut to `max_input_bytes` at a word boundary, as valid UTF-8."""
        if self.max_input_bytes is None:
            return valid_utf8(text)
        too_long = tf.strings.length(text) > self.max_input_bytes

        def cut():
            prefix = valid_utf8(tf.strings.substr(text, 0, self.max_input_bytes))
            at_last_space = tf.strings.regex_replace(
                prefix, f"{whitespace_class()}{non_whitespace_class()}*$", "")
            return tf.where(too_long, at_last_space, prefix)

        return tf.cond(tf.reduce_any(too_long), cut, lambda: valid_utf8(text))

    def _encode(self, valid_text: tf.Tensor, sentencepiece) -> tf.RaggedTensor:
        ids = sentencepiece.tokenize(normalize_text(valid_text, self.lower_case))
        return self._split_digit_commas(ids)

    def _split_digit_commas(self, ids: tf.RaggedTensor) -> tf.RaggedTensor:
        if self._digit_comma_table is None:
            return ids
        starts, lengths, values = (tf.constant(array) for array in self._digit_comma_table)
        flat_ids = ids.flat_values
        first = tf.gather(starts, flat_ids)
        replacement = tf.ragged.range(first, first + tf.gather(lengths, flat_ids))
        replaced = replacement.with_flat_values(tf.gather(values, replacement.flat_values))
        return ids.with_flat_values(replaced).merge_dims(-2, -1)

    def tokenize_with_masks(self, text: tf.Tensor) -> tf.RaggedTensor:
        """Ids of text in which each literal "[MASK]" becomes the [MASK] id.

        The text between masks is tokenized piece by piece. A piece that follows a mask
        directly, with no space ("[MASK]." or "un[MASK]able"'s "able"), is encoded as the
        continuation of a word, without SentencePiece's word-start marker.

        text: tf.string `(batch_size,)` -> int32 `tf.RaggedTensor` `(batch_size, (pieces))`.
        """
        parts = tf.strings.split(self._valid_prefix(text), sep=MASK_TEXT)  # (batch, (parts))
        flat_parts = parts.flat_values
        after_mask = _index_in_row(parts) > 0
        first_char = tf.strings.substr(flat_parts, 0, 1, unit="UTF8_CHAR")
        continues_word = after_mask & (first_char != "") & ~tf.strings.regex_full_match(
            first_char, whitespace_class())
        word_parts = tf.where(~continues_word)[:, 0]
        continuation_parts = tf.where(continues_word)[:, 0]
        part_ids = tf.concat([
            self._encode(tf.gather(flat_parts, word_parts), self._sentencepiece),
            self._encode(tf.gather(flat_parts, continuation_parts), self._continuation)], axis=0)
        part_ids = tf.gather(part_ids, tf.math.invert_permutation(
            tf.concat([word_parts, continuation_parts], axis=0)))
        # The [MASK] id before every part but each text's first.
        part_ids = tf.concat([column(MASK_ID, after_mask), part_ids], axis=1)
        return parts.with_flat_values(part_ids).merge_dims(-2, -1)

    @property
    def resources(self) -> tuple[tf.Module, ...]:
        """The tensorflow-text tokenizers (SentencePiece resources) an exported graph uses;
        a `tf.Module` that serves this layer's ops tracks them so a SavedModel saves them."""
        return self._sentencepiece, self._continuation

    def id_to_piece(self, ids: tf.Tensor) -> tf.Tensor:
        """The piece strings of int ids (any shape)."""
        return self._sentencepiece.id_to_string(ids)

    def get_config(self):
        """The settings; a model given as bytes is left out (a config is JSON): whatever
        saves this layer keeps the bytes (`TextPreprocessor` does, as a `.keras` asset)."""
        spm_model = None if isinstance(self.spm_model, bytes) else self.spm_model
        return {**super().get_config(), "spm_model": spm_model,
                "lower_case": self.lower_case, "max_input_bytes": self.max_input_bytes}


def _sentencepiece_tokenizer(proto: bytes) -> tf_text.SentencepieceTokenizer:
    """A tensorflow-text SentencePiece tokenizer whose model resource is named after the
    model's bytes and outlives TensorFlow's kernel cache.

    (tensorflow-text's `FastSentencepieceTokenizer` runs 1.6 times as fast but gave other ids
    than SentencePiece for about 0.2% of the texts tried, so it is not used.)

    The name matters twice. tensorflow-text creates the model's resource as the private
    property of the kernel that made it, and that kernel lives in TensorFlow's eager kernel
    cache: `tf.random.set_seed` (so `tf_keras.utils.set_random_seed`) and
    `tf_keras.backend.clear_session` clear the cache, the kernel goes and takes the resource
    with it, and every later call of the tokenizer, eager, traced or in a `tf.data` pipeline,
    fails with "Resource localhost/_0_SentencepieceOp/... does not exist"
    (tensorflow/text#570). Created under a shared name instead (the private one
    tensorflow-text's constructor made is left unused), the resource belongs to the device's
    resource manager and stays. And equal models may share one resource, different ones must
    not (in a reloaded SavedModel two tokenizers of one name shared one, so the second
    tokenized with the first one's model): the name is the model's digest.
    """
    digest = hashlib.sha256(proto).hexdigest()[:16]
    name = f"sentencepiece_{digest}"
    tokenizer = tf_text.SentencepieceTokenizer(proto, out_type=tf.int32, name=name)
    tokenizer._model_resource = _SharedSentencepieceModel(proto, name)
    return tokenizer


class _SharedSentencepieceModel(tf_text_sentencepiece._SentencepieceModelResource):
    """tensorflow-text's SentencePiece model resource, created under the shared name `name`
    (its own creates a kernel-private one; see `_sentencepiece_tokenizer`). A SavedModel
    records the creating op with its shared name, so a loaded model's resource stays too."""

    def _create_resource(self) -> tf.Tensor:
        with tf.name_scope(self._name):
            return tf_text_sentencepiece.gen_sentencepiece_tokenizer.sentencepiece_op(
                model=self._model, shared_name=self._name)


def _index_in_row(ragged: tf.RaggedTensor) -> tf.Tensor:
    """For each flat value of a 2-D ragged tensor, its position within its row."""
    return tf.range(tf.size(ragged.flat_values, out_type=ragged.row_splits.dtype)) - \
        tf.repeat(ragged.row_starts(), ragged.row_lengths())


def _digit_comma_table(tokenizer: SentencePieceTokenizer) -> tuple[np.ndarray, ...] | None:
    """(starts, lengths, values): id i becomes values[starts[i]:starts[i] + lengths[i]];
    None when the vocabulary has no digit-comma pieces (then ids pass through)."""
    if not tokenizer.digit_comma_ids:
        return None
    replacements = [tokenizer.split_digit_commas([piece_id])
                    for piece_id in range(tokenizer.vocab_size)]
    lengths = np.array([len(parts) for parts in replacements], np.int32)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int32)
    values = np.array([part for parts in replacements for part in parts], np.int32)
    return starts, lengths, values
