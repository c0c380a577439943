"""The ALBERT text normalization (`albert_tf.text.normalize.normalize_text`) as TensorFlow ops.

The character classes the graph needs (combining marks, whitespace) are read from this
Python's `unicodedata` when the graph is built, not approximated by regex categories
(`\\p{Mn}` is not "non-zero combining class": U+0941 is Mn with class 0). So the two agree on
every character assigned in Python 3.11's Unicode 14 database but 40 capitals new in Unicode
14 (Vithkuqi, U+2C2F GLAGOLITIC CAPITAL LETTER CAUDATE CHRIVI, four Latin), which
TensorFlow's older case tables leave upper-case
(tests/albert_tf/preprocessing/test_preprocessing.py pins this).
Characters Python 3.11 does not know yet may also differ: TF's ICU decomposes some of them.
"""

from __future__ import annotations

import functools
import sys
import unicodedata

import tensorflow as tf
import tensorflow_text as tf_text


def character_class(code_points: list[int]) -> str:
    """An RE2 character class matching exactly `code_points` (sorted), as compact ranges.

    >>> character_class([9, 10, 11, 32])
    '[\\\\x{9}-\\\\x{b}\\\\x{20}]'
    """
    ranges: list[list[int]] = []
    for code in code_points:
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    parts = (f"\\x{{{first:x}}}" if first == last else f"\\x{{{first:x}}}-\\x{{{last:x}}}"
             for first, last in ranges)
    return "[" + "".join(parts) + "]"


@functools.lru_cache(maxsize=None)
def combining_marks_class() -> str:
    """Characters with a non-zero canonical combining class (what the normalization drops)."""
    return character_class([code for code in range(sys.maxunicode + 1)
                            if unicodedata.combining(chr(code))])


@functools.lru_cache(maxsize=None)
def _whitespace_code_points() -> tuple[int, ...]:
    """What Python's `str.split()` splits on: Unicode whitespace, \\x1c-\\x1f too."""
    return tuple(code for code in range(sys.maxunicode + 1) if chr(code).isspace())


def whitespace_class() -> str:
    return character_class(list(_whitespace_code_points()))


def non_whitespace_class() -> str:
    return "[^" + whitespace_class()[1:]


def whitespace_but_space_class() -> str:
    return character_class([code for code in _whitespace_code_points() if code != 0x20])


# Full matches only valid UTF-8 (RE2 refuses invalid bytes; surrogates are refused by hand).
_VALID_UTF8 = "(?s)[^\\x{d800}-\\x{dfff}]*"


def valid_utf8(text: tf.Tensor) -> tf.Tensor:
    """`text` with every invalid UTF-8 sequence replaced by U+FFFD, so later ops never fail.

    The transcoding op costs 50 ns a byte, so it only runs on batches that need it: checking
    with a regex costs a tenth of that.
    """
    return tf.cond(tf.reduce_all(tf.strings.regex_full_match(text, _VALID_UTF8)),
                   lambda: tf.identity(text),
                   lambda: tf.strings.unicode_transcode(text, "UTF-8", "UTF-8",
                                                        errors="replace",
                                                        replacement_char=0xFFFD))


def _lower(text: tf.Tensor) -> tf.Tensor:
    """Unicode lower-casing. `tf.strings.lower(encoding="utf-8")` stops at a NUL character
    (the rest of the string is lost), so the pieces between NULs are lower-cased apart and
    joined again (a NUL in an op attribute, such as a join separator, is dropped too, so the
    NULs go back as tensor values)."""
    nul = tf.constant("\x00")
    pieces = tf.strings.lower(tf.strings.split(text, sep="\x00"), encoding="utf-8")
    joined = tf.strings.reduce_join(tf.strings.join([pieces, nul]), axis=-1)
    length = tf.strings.length(joined) - 1
    return tf.strings.substr(joined, tf.zeros_like(length), length)


def normalize_text(text: tf.Tensor, lower_case: bool) -> tf.Tensor:
    """The graph version of `albert_tf.text.normalize.normalize_text` on a string tensor.

    Steps, in the Python function's order: LaTeX quotes (two backquotes or two single
    quotes) -> `"`, NFKD, combining marks dropped, lower-cased (if asked), whitespace runs ->
    one space, stripped. `text` must be valid UTF-8 (see `valid_utf8`).
    """
    text = tf.strings.regex_replace(text, "``|''", '"')
    text = tf_text.normalize_utf8(text, "NFKD")
    text = tf.strings.regex_replace(text, combining_marks_class(), "")
    if lower_case:
        text = _lower(text)
    # Only what needs changing matches: runs of 2+ whitespace and single non-space ones (a
    # pattern matching every single space too takes 5 times as long on ordinary text).
    text = tf.strings.regex_replace(
        text, f"{whitespace_class()}{{2,}}|{whitespace_but_space_class()}", " ")
    return tf.strings.strip(text)
