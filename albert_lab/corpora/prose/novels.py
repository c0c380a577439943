"""Novels kept as character vectors (a line each) in an R package's lazy-load data
(janeaustenr: a novel per vector): a document per chapter."""

from __future__ import annotations

import re
from typing import Iterator

from albert_lab.corpora.prose.documents import MIN_SENTENCES, Document, split_paragraphs
from albert_lab.corpora.prose.filters import sentences_of
from albert_lab.corpora.rdata import R_STRING, RObject, read_lazy_load_database

_CHAPTER_LINE = re.compile(r"^\s*(?:CHAPTER|Chapter)\s+[IVXLCDM\d]+\.?\s*$")


def novel_chapters(lines: list[str]) -> Iterator[Document]:
    """A novel's chapters (lines with blank lines between paragraphs) as documents; title
    pages, volume and chapter headings and _emphasis_ marks dropped."""
    chapter: list[str] = []
    started = False
    for line in lines + ["CHAPTER 0"]:
        if _CHAPTER_LINE.match(line or ""):
            if started:
                text = re.sub(r"_([^_]+)_", r"\1", "\n".join(chapter))
                sentences = [sentence for paragraph in split_paragraphs(text)
                             if not paragraph.isupper() for sentence in sentences_of(paragraph)]
                if len(sentences) >= MIN_SENTENCES:
                    yield sentences
            chapter, started = [], True
        elif started:
            chapter.append(line or "")


def r_novel_documents(index_path: str) -> Iterator[Document]:
    """The chapters of every unnamed character vector of the lazy-load database that
    `index_path` (its `Rdata.rdx`) indexes, the vectors in the order of their names."""
    objects = read_lazy_load_database(index_path.removesuffix(".rdx"))
    for name in sorted(objects):
        vector = objects[name]
        if (isinstance(vector, RObject) and vector.type == R_STRING
                and "names" not in vector.attributes):
            yield from novel_chapters(vector.values)
