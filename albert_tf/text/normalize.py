"""Text normalization applied before SentencePiece, as the original ALBERT tokenizer does it.

Whitespace runs collapse to one space, LaTeX-style quotes (two backquotes, two single quotes)
become `"`, text is NFKD-decomposed with the combining marks dropped ("café" -> "cafe"), and
lower-cased when asked. The same function runs when the SentencePiece model is trained and when
text is encoded, so both see the same strings.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# What `str.split()` splits at: `\s` is the same set (`str.isspace`) in a `str` pattern.
_ANY_WHITESPACE = re.compile(r"\s")
_ASCII_BYTES = bytes(range(128))
# Every character with a non-zero combining class is at U+0300 or above.
_FROM_FIRST_COMBINING_MARK = re.compile("[\u0300-\U0010ffff]")
_SPACES_MARKED = bytes.maketrans(b"\n\0\t\x0b\x0c\r\x1c\x1d\x1e\x1f", b" " + bytes(9))


def normalize_text(text: str, lower_case: bool) -> str:
    """Returns `text` normalized, all whitespace (newlines too) collapsed to single spaces.

    >>> normalize_text("  Caf\\u00e9  ``au lait''\\t ", lower_case=True)
    'cafe "au lait"'
    """
    return " ".join(_normalize_characters(text, lower_case).split())


def normalize_document(raw: bytes, lower_case: bool) -> list[str]:
    r"""`normalize_text` of each line of UTF-8 `raw` (split at "\n" only), empty results
    dropped: a document's sentences, in a few passes over its bytes instead of several over
    each line. Raises UnicodeDecodeError if `raw` is not UTF-8.

    The quotes and the ASCII letters are handled on the bytes; each distinct non-ASCII
    character is normalized once (NFKD, marks dropped, lower-cased) and replaced throughout.
    That is exact because no step crosses a character, save lower-casing a capital sigma
    (final or not by its neighbours): a text with one goes line by line. Whitespace is
    collapsed only in the documents that need it.

    >>> normalize_document("Caf\u00e9  au LAIT\n \n\n``Tea''\n".encode(), lower_case=True)
    ['cafe au lait', '"tea"']
    """
    original = raw
    if b"``" in raw or b"''" in raw:
        raw = raw.replace(b"``", b'"').replace(b"''", b'"')
    if lower_case:
        raw = raw.lower()  # ASCII letters only; the other characters are mapped below
    text = raw.decode("utf-8")
    spaced = _single_spaced(raw)
    if not raw.isascii():
        for character in set(raw.translate(None, _ASCII_BYTES).decode("utf-8")):
            normalized = _normalized_character(character, lower_case)
            if normalized is None:
                return normalize_lines(original.decode("utf-8"), lower_case)
            if normalized != character:
                text = text.replace(character, normalized)
            spaced = spaced and not _ANY_WHITESPACE.search(normalized)
    lines = text.split("\n")
    if not spaced:
        lines = [" ".join(line.split()) for line in lines]
    return [line for line in lines if line]


def normalize_lines(text: str, lower_case: bool) -> list[str]:
    """`normalize_text` of each line of `text` (split at "\n" only), empty results dropped."""
    lines = (normalize_text(line, lower_case) for line in text.split("\n"))
    return [line for line in lines if line]


def _single_spaced(raw: bytes) -> bool:
    """True if the ASCII whitespace of UTF-8 `raw` is single spaces inside lines only (False
    may also mean a NUL byte or a blank line: the caller then collapses whitespace anyway)."""
    # One search instead of three: newlines read as spaces, other whitespace as NUL bytes.
    marked = raw.translate(_SPACES_MARKED)
    return not (b"  " in marked or 0 in marked or raw[:1] == b" " or raw[-1:] == b" ")


@functools.lru_cache(maxsize=None)
def _normalized_character(character: str, lower_case: bool) -> str | None:
    """What `_normalize_characters` makes of one non-ASCII character anywhere; None if that
    depends on its neighbours (a capital sigma lower-cases to a final or a medial one)."""
    decomposed = unicodedata.normalize("NFKD", character).translate(_DROP_COMBINING_MARKS)
    if lower_case and "\u03a3" in decomposed:
        return None
    return decomposed.lower() if lower_case else decomposed


def _normalize_characters(text: str, lower_case: bool) -> str:
    # ASCII text skips the NFKD pass, which would change nothing in it.
    if "``" in text or "''" in text:
        text = text.replace("``", '"').replace("''", '"')
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        # `translate` looks up every character: run it only when there is a mark to drop.
        beyond = set(_FROM_FIRST_COMBINING_MARK.findall(text))
        if any(_DROP_COMBINING_MARKS[ord(character)] is None for character in beyond):
            text = text.translate(_DROP_COMBINING_MARKS)
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
