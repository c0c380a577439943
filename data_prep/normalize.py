"""Text normalization applied before SentencePiece, as the original ALBERT tokenizer does it.

Whitespace runs collapse to one space, LaTeX-style quotes (two backquotes, two single quotes)
become `"`, text is NFKD-decomposed with the combining marks dropped ("café" -> "cafe"), and
lower-cased when asked. The same function runs when the SentencePiece model is trained and when
text is encoded, so both see the same strings.
"""

from __future__ import annotations

import unicodedata


def normalize_text(text: str, lower_case: bool) -> str:
    """Returns `text` normalized; ASCII text skips the (costly, and for it idle) NFKD pass.

    >>> normalize_text("  Caf\\u00e9  ``au lait''\\t ", lower_case=True)
    'cafe "au lait"'
    """
    text = " ".join(text.split())
    if "``" in text or "''" in text:
        text = text.replace("``", '"').replace("''", '"')
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = "".join(char for char in text if not unicodedata.combining(char))
    if lower_case:
        text = text.lower()
    return text
