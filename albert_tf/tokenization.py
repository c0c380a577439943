"""The ALBERT tokenizer: text -> normalized text -> SentencePiece ids, as the original did it.

The released models' `30k-clean.model` (and every model `albert-data train-spm` writes) has
the ALBERT id layout: `<pad>`=0, `<unk>`=1, `[CLS]`=2, `[SEP]`=3, `[MASK]`=4, with `[CLS]`,
`[SEP]` and `[MASK]` as control symbols, so text containing "[SEP]" is never read as the
separator. Text is normalized as the original tokenizer normalized it before SentencePiece:
whitespace collapsed, LaTeX quotes to `"`, NFKD with combining marks removed ("café" ->
"cafe"), lower-cased for the uncased models (all released ALBERT models are uncased), and a
piece ending in a digit and a comma split off its comma.

Example (with the released vocabulary file, which is not shipped here):

    tokenizer = AlbertTokenizer("30k-clean.model")
    tokenizer.tokenize("Café au lait")  # ['▁cafe', '▁au', '▁lait']
"""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np
import sentencepiece as spm

from albert_tf.text.normalize import normalize_text
from albert_tf.text.sentencepiece_proto import without_dummy_prefix
from albert_tf.text.vocabulary import (
    CLS_ID,
    MASK_ID,
    PAD_ID,
    SEP_ID,
    UNK_ID,
    SentencePieceTokenizer,
)

MASK_TEXT = "[MASK]"


class AlbertTokenizer:
    """A SentencePiece model with ALBERT's normalization and id layout.

    Args:
        spm_model: path of the `.model` file (local or any TensorFlow filesystem), or its
            bytes.
        lower_case: lower-case before encoding; true for the released (uncased) models.
    """

    pad_id, unk_id, cls_id, sep_id, mask_id = PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID

    def __init__(self, spm_model: str | os.PathLike | bytes, lower_case: bool = True):
        self.spm_model = spm_model if isinstance(spm_model, bytes) else os.fspath(spm_model)
        self.lower_case = lower_case
        self._tokenizer = SentencePieceTokenizer(self.spm_model)  # checks the id layout
        self._continuation = None  # built on first use: encodes text that continues a word

    @property
    def vocab_size(self) -> int:
        return self._tokenizer.vocab_size

    @property
    def piece_model(self) -> SentencePieceTokenizer:
        """The loaded SentencePiece model with the digit-comma rule (`albert_tf.text.vocabulary`),
        for callers that need more than ids, e.g. piece offsets for SQuAD answer spans."""
        return self._tokenizer

    def normalize(self, text: str) -> str:
        return normalize_text(text, self.lower_case)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Piece ids of each text (normalized here); no [CLS]/[SEP] are added."""
        return self._tokenizer.encode([self.normalize(text) for text in texts])

    def encode(self, text: str) -> list[int]:
        return self.encode_batch([text])[0]

    def tokenize(self, text: str) -> list[str]:
        return self._tokenizer.pieces(self.encode(text))

    def decode(self, ids: Sequence[int]) -> str:
        return self._tokenizer.processor.decode([int(piece_id) for piece_id in ids])

    def encode_with_masks(self, text: str) -> list[int]:
        """Ids of `text` with each literal "[MASK]" as the [MASK] id (what `fill_mask` reads).

        The text between masks is encoded piece by piece; a piece that follows a mask with no
        space ("[MASK]." or the "able" of "un[MASK]able") is encoded as the continuation of a
        word, without SentencePiece's word-start marker.
        """
        ids: list[int] = []
        for index, part in enumerate(text.split(MASK_TEXT)):
            if index > 0:
                ids.append(self.mask_id)
            continues_word = index > 0 and part and not part[0].isspace()
            ids += self._encode_continuation(part) if continues_word else self.encode(part)
        return ids

    def _encode_continuation(self, text: str) -> list[int]:
        if self._continuation is None:
            self._continuation = spm.SentencePieceProcessor(model_proto=without_dummy_prefix(
                self._tokenizer.processor.serialized_model_proto()))
        ids = self._continuation.encode(self.normalize(text), out_type=int)
        return self._tokenizer.split_digit_commas(ids)

    def encode_for_model(self, texts: Sequence[str], text_pairs: Sequence[str] | None = None,
                         max_seq_length: int = 512) -> dict[str, np.ndarray]:
        """Encoder inputs for texts (and pairs): `[CLS] a [SEP]` or `[CLS] a [SEP] b [SEP]`,
        truncated as the original `run_classifier.py` did and padded to the longest row.

        An empty pair text packs its row as a single text (as the original did). Returns int32
        `(batch_size, seq_length)` arrays `input_word_ids`, `input_mask`, `input_type_ids`.
        """
        if text_pairs is not None and len(text_pairs) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(text_pairs)} text pairs")
        return self.pack(self.encode_batch(texts),
                         None if text_pairs is None else self.encode_batch(text_pairs),
                         max_seq_length)

    def pack(self, first: Sequence[list[int]], second: Sequence[list[int]] | None = None,
             max_seq_length: int = 512) -> dict[str, np.ndarray]:
        """`encode_for_model` on ids: each row of `first` (with the row of `second`) packed,
        truncated and padded as there."""
        rows = []
        for index, ids in enumerate(first):
            ids_a, ids_b = list(ids), list(second[index]) if second is not None else []
            truncate_pair(ids_a, ids_b, max_seq_length - (3 if ids_b else 2))
            word_ids = [self.cls_id, *ids_a, self.sep_id]
            type_ids = [0] * len(word_ids)
            if ids_b:
                word_ids += [*ids_b, self.sep_id]
                type_ids += [1] * (len(ids_b) + 1)
            rows.append((word_ids, type_ids))
        length = max([2] + [len(word_ids) for word_ids, _ in rows])
        inputs = {name: np.zeros((len(rows), length), np.int32)
                  for name in ("input_word_ids", "input_mask", "input_type_ids")}
        for row, (word_ids, type_ids) in enumerate(rows):
            inputs["input_word_ids"][row, :len(word_ids)] = word_ids
            inputs["input_mask"][row, :len(word_ids)] = 1
            inputs["input_type_ids"][row, :len(type_ids)] = type_ids
        return inputs


def truncate_pair(first: list[int], second: list[int], budget: int) -> None:
    """Shortens the two lists in place to `budget` items in all, as the original
    `_truncate_seq_pair` did: the last item of the longer one goes first (of `second` on ties).

    >>> a, b = [1, 2, 3, 4], [5, 6]
    >>> truncate_pair(a, b, 3); a, b
    ([1, 2], [5])
    """
    while len(first) + len(second) > budget:
        (first if len(first) > len(second) else second).pop()
