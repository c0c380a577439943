"""A SWORD Bible module (zText, OSIS markup, a compressed block per book): a document per
chapter, notes and titles dropped."""

from __future__ import annotations

import html
import re
import struct
import zlib
from typing import Iterator

from albert_lab.corpora.prose.documents import Document, long_enough, split_paragraphs
from albert_lab.corpora.prose.filters import prose_sentences
from albert_tf.text.options import DataPrepError


def sword_blocks(index_path: str) -> Iterator[str]:
    """The decompressed blocks of a zText module part (`ot.bzs` indexes `ot.bzz`)."""
    data_path = index_path[:-1] + "z"
    with open(index_path, "rb") as file:
        index = file.read()
    with open(data_path, "rb") as file:
        data = file.read()
    for start in range(0, len(index) - 11, 12):
        offset, size, _ = struct.unpack("<III", index[start:start + 12])
        try:
            yield zlib.decompress(data[offset:offset + size]).decode("utf-8", errors="replace")
        except zlib.error as error:
            raise DataPrepError(f"{data_path}: block {start // 12} is not zlib data "
                                f"({error}); expected a zText module with CompressType=ZIP")


def osis_chapter_paragraphs(osis: str) -> Iterator[list[str]]:
    """The paragraphs of each chapter of an OSIS text: notes, titles and tags dropped."""
    osis = re.sub(r"<note\b.*?</note>|<title\b.*?</title>", " ", osis, flags=re.S)
    for chapter in re.split(r"<chapter\b[^>]*/>", osis):
        # paragraphs and stanzas break; verse lines, words and milestones are just text
        chapter = re.sub(r'<div\b[^>]*\btype="x-p"[^>]*>|</?(?:p|lg)\b[^>]*>', "\n\n", chapter)
        text = html.unescape(re.sub(r"<[^>]*>", "", chapter))
        yield split_paragraphs(text)


def sword_documents(index_path: str) -> Iterator[Document]:
    """The chapters of a zText module part (`ot.bzs`, `nt.bzs`), one document each."""
    for block in sword_blocks(index_path):
        for paragraphs in osis_chapter_paragraphs(block):
            yield from long_enough([prose_sentences(paragraphs)])
