"""Documents of sentences, the unit every prose reader yields, and what the readers share to
make them: a file's text (plain, gzip or dictzip), paragraphs, the two-sentence minimum."""

from __future__ import annotations

import gzip
import re
import zlib
from typing import Callable, Iterable, Iterator

from albert_tf.text.options import DataPrepError

MIN_SENTENCES = 2  # a document needs this many sentences

Document = list[str]
Reader = Callable[[str], Iterator[Document]]  # one file -> its documents


def read_text(path: str) -> str:
    """The text of a plain, .gz or dictzip (.dz) file, as UTF-8 (bad bytes replaced)."""
    opener = gzip.open if path.endswith((".gz", ".dz")) else open
    try:
        with opener(path, "rb") as file:
            data = file.read()
    except (OSError, EOFError, zlib.error) as error:
        raise DataPrepError(f"cannot read {path}: {error}") from None
    return data.decode("utf-8", errors="replace")


def collapse(text: str) -> str:
    """Whitespace runs (line breaks too) as one space, none at the ends.

    >>> collapse("  two\\n lines ")
    'two lines'
    """
    return " ".join(text.split())


def split_paragraphs(text: str) -> list[str]:
    """Blocks of text between blank lines, each with its lines joined."""
    return [collapse(block) for block in re.split(r"\n[ \t]*\n", text) if block.strip()]


def long_enough(documents: Iterable[Document]) -> Iterator[Document]:
    """The documents of `MIN_SENTENCES` sentences or more."""
    return (document for document in documents if len(document) >= MIN_SENTENCES)
