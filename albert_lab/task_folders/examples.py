"""A labelled example as the task readers yield it, and the text cleaning they share."""

from __future__ import annotations

import dataclasses
from typing import Union

Label = Union[str, float]


@dataclasses.dataclass(frozen=True)
class Example:
    """One labelled example as a reader yields it.

    Attributes:
        texts: the text, or the two texts of a pair.
        label: the label as written (a string of the task's labels, or a score).
        groups: the source item of each text (same length as `texts`): what the split keeps
            together, e.g. the article's file, the movie, the product, the document.
    """

    texts: tuple[str, ...]
    label: Label
    groups: tuple[str, ...]


def clean_text(text: str) -> str:
    """One line: whitespace runs (tabs and line breaks too) and NUL bytes become one space."""
    return " ".join(text.replace("\x00", " ").split())


def decode_text(data: bytes) -> str:
    """UTF-8, else Windows-1252 (a stray pound sign in an old file), else Latin-1."""
    for encoding in ("utf-8", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")
