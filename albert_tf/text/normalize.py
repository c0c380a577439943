"""Text normalization applied before SentencePiece, as the original ALBERT tokenizer does it.

Whitespace runs collapse to one space, LaTeX-style quotes (two backquotes, two single quotes)
become `"`, text is NFKD-decomposed with the combining marks dropped ("café" -> "cafe"), and
lower-cased when asked. The same function runs when the SentencePiece model is trained and when
text is encoded, so both see the same strings.
"""

from __future__ import annotations

import unicodedata


def normalize_text(text: str, lower_case: bool) -> str:
    """Returns `text` normalized, all whitespace (newlines too) collapsed to single spaces.

    >>> normalize_text("  Caf\\u00e9  ``au lait''\\t ", lower_case=True)
    'cafe "au lait"'
    """
    return " ".join(_normalize_characters(text, lower_case).split())


def _normalize_characters(text: str, lower_case: bool) -> str:
    # ASCII text skips the NFKD pass, which would change nothing in it.
    if "``" in text or "''" in text:
        text = text.replace("``", '"').replace("''", '"')
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text).translate(_DROP_COMBINING_MARKS)
    if lower_case:
        text = text.lower()
    return text


class _CombiningMarkDropper(dict):
    """A `str.translate` table that deletes characters with a non-zero combining class.

    Filled lazily, one code point at a time as text shows it, so loading costs nothing (a full
    table would take a pass over all 1.1M code points in every worker).
    """

    def __missing__(self, code: int):
        value = None if unicodedata.combining(chr(code)) else code
        self[code] = value
        return value


_DROP_COMBINING_MARKS = _CombiningMarkDropper()
