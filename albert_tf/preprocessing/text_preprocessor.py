"""TextPreprocessor: raw text in, encoder inputs out, with its SentencePiece model inside.

The raw-text task models (`albert_tf.text_models`) keep one as their `preprocessor`. The
model's bytes travel with the layer: a `.keras` file holds them as the layer's asset
(`save_assets` / `load_assets`, which tf_keras calls while saving and loading), so a saved
model tokenizes exactly as the one that was trained, with no path to keep valid.
"""

from __future__ import annotations

import os

import tensorflow as tf
import tf_keras

from albert_tf.preprocessing.graph_tokenizer import BYTES_PER_POSITION, AlbertTextTokenizer
from albert_tf.preprocessing.packing import AlbertInputPacker

ASSET_FILE = "sentencepiece.model"


@tf_keras.utils.register_keras_serializable(package="albert_tf")
class TextPreprocessor(tf_keras.layers.Layer):
    """ALBERT's normalization, SentencePiece and packing, in the graph.

    Args:
        spm_model: the SentencePiece `.model` (a path, or its bytes). None only while a saved
            model loads: `load_assets` then gives it.
        lower_case: lower-case before SentencePiece (the released models are uncased).
        max_seq_length: the longest packed row; longer inputs are truncated as the original
            `run_classifier.py` truncated them.
        pad_to_multiple_of: a batch is padded to its longest row rounded up to this (at most
            `max_seq_length`), so short batches cost less and XLA sees few shapes.

    Call: `text` tf.string `(batch_size,)`, or a list `[text, text_pair]` of two -> dict of
    int32 `(batch_size, seq_length)`: `input_word_ids`, `input_mask`, `input_type_ids`.

    Example:
        preprocessor = TextPreprocessor("spm.model", max_seq_length=128)
        preprocessor(tf.constant(["The cafe was open."]))["input_word_ids"]  # (1, 16)
    """

    def __init__(self, spm_model: str | os.PathLike | bytes | None = None,
                 lower_case: bool = True, max_seq_length: int = 512,
                 pad_to_multiple_of: int = 16, **kwargs):
        kwargs["trainable"] = False
        super().__init__(**kwargs)
        self.lower_case = lower_case
        self.max_seq_length = max_seq_length
        self.pad_to_multiple_of = pad_to_multiple_of
        self.packer = AlbertInputPacker(max_seq_length, pad_to_multiple_of, name="packer")
        self.tokenizer: AlbertTextTokenizer | None = None
        if spm_model is not None:
            self.set_sentencepiece_model(spm_model)

    def set_sentencepiece_model(self, spm_model: str | os.PathLike | bytes) -> None:
        """Builds the in-graph tokenizer from a `.model` path or its bytes."""
        self.tokenizer = AlbertTextTokenizer(
            spm_model, self.lower_case, max_input_bytes=BYTES_PER_POSITION * self.max_seq_length,
            name="tokenizer")

    @property
    def proto(self) -> bytes:
        """The SentencePiece model's bytes."""
        return self._checked_tokenizer().proto

    @property
    def vocab_size(self) -> int:
        return self._checked_tokenizer().vocab_size

    def _checked_tokenizer(self) -> AlbertTextTokenizer:
        if self.tokenizer is None:
            raise ValueError(f"{self.name} has no SentencePiece model yet: give spm_model, or "
                             f"load the saved model whose asset holds it")
        return self.tokenizer

    def tokenize(self, text: tf.Tensor) -> tf.RaggedTensor:
        """tf.string `(batch_size,)` -> int32 ragged `(batch_size, (pieces))`."""
        return self._checked_tokenizer()(text)

    def call(self, texts) -> dict[str, tf.Tensor]:
        segments = [texts] if isinstance(texts, tf.Tensor) else list(texts)
        return self.packer([self.tokenize(segment) for segment in segments])

    def save_assets(self, dir_path: str) -> None:
        with open(os.path.join(dir_path, ASSET_FILE), "wb") as f:
            f.write(self.proto)

    def load_assets(self, dir_path: str) -> None:
        with open(os.path.join(dir_path, ASSET_FILE), "rb") as f:
            self.set_sentencepiece_model(f.read())

    def get_config(self):
        return {**super().get_config(), "lower_case": self.lower_case,
                "max_seq_length": self.max_seq_length,
                "pad_to_multiple_of": self.pad_to_multiple_of}
