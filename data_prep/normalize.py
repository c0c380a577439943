"""Text normalization applied before SentencePiece, as the original ALBERT tokenizer does it.

Whitespace runs collapse to one space, LaTeX-style quotes (two backquotes, two single quotes)
become `"`, text is NFKD-decomposed with the combining marks dropped ("café" -> "cafe"), and
lower-cased when asked. The same function runs when the SentencePiece model is trained and when
text is encoded, so both see the same strings.
"""

from __future__ import annotations

import functools
import sys
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
        text = unicodedata.normalize("NFKD", text).translate(_without_combining_marks())
    if lower_case:
        text = text.lower()
    return text


@functools.cache
def _without_combining_marks() -> dict[int, None]:
    """A `str.translate` table deleting every character with a non-zero combining class."""
    return {code: None for code in range(sys.maxunicode + 1)
            if unicodedata.combining(chr(code))}
