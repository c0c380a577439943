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

from data_prep.normalize import normalize_text
from data_prep.tokenizer import CLS_ID, MASK_ID, PAD_ID, SEP_ID, UNK_ID, Tokenizer


class AlbertTokenizer:
    """A SentencePiece model with ALBERT's normalization and id layout.

    Args:
        spm_model: path of the `.model` file (local or any TensorFlow filesystem).
        lower_case: lower-case before encoding; true for the released (uncased) models.
    """

    pad_id, unk_id, cls_id, sep_id, mask_id = PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID

    def __init__(self, spm_model: str | os.PathLike, lower_case: bool = True):
        self.spm_model = os.fspath(spm_model)
        self.lower_case = lower_case
        self._tokenizer = Tokenizer(self.spm_model)  # checks the id layout

    @property
    def vocab_size(self) -> int:
        return self._tokenizer.vocab_size

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
