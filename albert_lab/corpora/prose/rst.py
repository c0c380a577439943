"""reStructuredText (the `_sources/*.rst.txt` Sphinx manuals install): a document per section,
inline markup removed, code, directives, tables and headings dropped."""

from __future__ import annotations

import re
from typing import Iterator

from albert_lab.corpora.prose.documents import Document, collapse, long_enough, read_text
from albert_lab.corpora.prose.filters import is_prose
from data_prep.sentences import split_sentences

_UNDERLINE = re.compile(r"^([=\-~^\"'*#+`:.])\1{2,}\s*$")
_DIRECTIVE = re.compile(r"^\.\.\s+[\w:-]+::")
_CODE_DIRECTIVES = ("code-block", "sourcecode", "literalinclude", "testcode", "testoutput",
                    "doctest", "productionlist", "toctree", "image", "figure", "csv-table",
                    "raw", "highlight", "list-table", "table", "only", "index")
_INLINE = [
    (re.compile(r":[\w:.-]+:`([^`]*)`"), r"\1"),  # :role:`text`
    (re.compile(r"``([^`]*)``"), r"\1"),  # ``literal``
    (re.compile(r"`([^`<]*?)\s*<[^>`]*>`_{1,2}"), r"\1"),  # `text <target>`_
    (re.compile(r"`([^`]*)`_{0,2}"), r"\1"),  # `text`_ and `text`
    (re.compile(r"\*\*([^*]+)\*\*"), r"\1"),
    (re.compile(r"\*([^*\s][^*]*)\*"), r"\1"),
    (re.compile(r"\|([^|\s][^|]*)\|"), r"\1"),
    (re.compile(r"(?<=\w)::(?=\s|$)"), ":"),
    (re.compile(r"(^|\s)[~!]"), r"\1"),
]


def clean_inline(text: str) -> str:
    """Removes reST inline markup, keeping the words.

    >>> clean_inline("Use :func:`~os.path.join` with ``a`` and `docs <https://x.org>`_::")
    'Use os.path.join with a and docs:'
    """
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    return collapse(text)


def rst_documents(text: str) -> Iterator[Document]:
    """Sections of a reST file as lists of sentences (prose only)."""
    lines = text.splitlines()
    document: Document = []
    paragraph: list[str] = []
    skip_indent = None  # skipping a literal block or code directive indented past this

    def flush():
        if paragraph:
            document.extend(split_sentences(clean_inline(" ".join(paragraph))))
            paragraph.clear()

    for index, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None:
            if not stripped or indent > skip_indent:
                continue
            skip_indent = None
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if _UNDERLINE.match(following) and stripped and not _UNDERLINE.match(line):
            flush()  # a heading starts a new document
            if len(document) > 1:
                yield list(document)
            document.clear()
            continue
        if not stripped or _UNDERLINE.match(line):
            flush()
            continue
        directive = _DIRECTIVE.match(stripped)
        if directive:
            flush()
            if any(name in stripped for name in _CODE_DIRECTIVES):
                skip_indent = indent
            continue
        if stripped.startswith((">>>", "...", "+--", "|", "..", "=====")):
            flush()
            continue
        paragraph.append(stripped)
        if stripped.endswith("::"):
            flush()
            skip_indent = indent
    flush()
    if len(document) > 1:
        yield document


def rst_documents_of(path: str) -> Iterator[Document]:
    """The sections of a reST file as `rst_documents` gives them (python-docs)."""
    yield from rst_documents(read_text(path))


def rst_prose_documents_of(path: str) -> Iterator[Document]:
    """The sections of a reST file, keeping only the sentences that read as prose."""
    documents = rst_documents(read_text(path))
    yield from long_enough([sentence for sentence in document if is_prose(sentence)]
                           for document in documents)
