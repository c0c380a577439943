"""dictd databases (.index + .dict.dz) of the English dictionaries (GCIDE, the Jargon File,
FOLDOC, the Devil's Dictionary): a document per entry, each dictionary's headwords, grammar,
etymologies, synonym lists and sources dropped."""

from __future__ import annotations

import gzip
import os
import re
from typing import Callable, Iterator

from albert_lab.corpora.prose.documents import (
    MIN_SENTENCES,
    Document,
    Reader,
    collapse,
    read_text,
    split_paragraphs,
)
from albert_lab.corpora.prose.filters import prose_sentences
from albert_tf.text.options import DataPrepError

_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _dictd_number(digits: str) -> int:
    number = 0
    for digit in digits:
        number = number * 64 + _BASE64.index(digit)
    return number


def dictd_entries(index_path: str) -> Iterator[str]:
    """The entries of a dictd database in file order, each once (several headwords may share
    one), its `00-database-*` records left out."""
    stem = index_path[:-len(".index")]
    data_path = next((stem + suffix for suffix in (".dict.dz", ".dict")
                      if os.path.exists(stem + suffix)), None)
    if data_path is None:
        raise DataPrepError(f"{index_path} has no {stem}.dict.dz or {stem}.dict beside it")
    opener = gzip.open if data_path.endswith(".dz") else open
    with opener(data_path, "rb") as file:
        data = file.read()
    spans = set()
    for number, line in enumerate(read_text(index_path).splitlines(), start=1):
        fields = line.split("\t")
        if len(fields) < 3:
            raise DataPrepError(f"{index_path}:{number}: expected 'word<TAB>offset<TAB>size', "
                                f"got {line[:80]!r}")
        if not fields[0].startswith(("00-database", "00database")):
            spans.add((_dictd_number(fields[1]), _dictd_number(fields[2])))
    for start, size in sorted(spans):
        yield data[start:start + size].decode("utf-8", errors="replace")


_BRACES = re.compile(r"\{([^{}]*)\}")
_URL = re.compile(r"\(?\b(?:https?|ftp)://[^\s(){}]+\)?")


def _entry_body(entry: str) -> list[str]:
    """An entry's paragraphs after the first (the headword, pronunciation and synonyms)."""
    return split_paragraphs(entry)[1:]


# GCIDE writes letters it cannot type as codes in brackets: [ae], ['e], [=a], [i^], [imac].
_GCIDE_LETTER = re.compile(r"\[(?:[\'`\"^~=.,\-]*([a-zA-Z]{1,2})[\^~]?|([a-z])(?:mac|um|sl|dd))\]")


# A headword, its pronunciation between backslashes, then grammar: n.; pl. {Lilies} (liliz).
_GCIDE_HEAD = re.compile(r"^[^\\]*\\[^\\]*\\"
                         r"(?:\s*(?:\([^)]*\)|\{[^}]*\}|[a-z]{1,6}\.|[A-Z][a-z]?\.|[;,&]))*")


def gcide_paragraphs(entry: str) -> list[str]:
    """GCIDE: definitions, usage notes and quotations; headword lines, grammar, etymologies and
    sources in brackets, synonym lists, derived forms and quotation authors dropped."""
    kept = []
    for block in re.split(r"\n[ \t]*\n", entry):
        # quotations' authors stand at column 30 or more
        lines = [line for line in block.splitlines() if len(line) - len(line.lstrip()) < 30]
        text = _GCIDE_LETTER.sub(lambda match: match.group(1) or match.group(2),
                                 collapse(" ".join(lines)))
        previous = None
        while previous != text:  # brackets nest: [imp. & p. p. {Abased}; ... [OE. ...]]
            previous, text = text, re.sub(r"\[[^\[\]]*\]", "", text)
        if block[:1].strip():  # a headword line first: Lily \Lil"y\, n.; pl. {Lilies}.
            text = _GCIDE_HEAD.sub("", text)
        text = collapse(text)
        if not text or text.startswith(("Syn:", "Syn.", "See ")):
            continue
        text = re.sub(r"^(?:Usage|Note):\s*", "", text)
        text = text.split(" -- {")[0]  # derived forms: -- {Life"less*ly}, adv.
        text = re.sub(r"\s--\s?[A-Z][\w.'& ]{0,40}?\.(?=\s|$)", "", text)  # --Locke.
        text = re.sub(r"^(?:(?:\d+|[a-z])[.)]\s*|\([A-Z][\w. ]*\)\s*)+|\s\([a-z]\)(?=\s)", "",
                      text)  # sense numbers, (Bot.) at the start, (a) (b) within
        kept.append(_BRACES.sub(r"\1", text).replace("*", ""))
    return kept


def dictionary_sentence(sentence: str) -> bool:
    """Whether a dictionary's sentence is a sentence: two words or more, a capital or a quote
    first (not "n.", "1.", "pl.", "Cf.", "(Zool.)", "pr. & vb. n." or an author's name)."""
    return len(sentence.split()) >= 2 and (sentence[0].isupper() or sentence[0] in "\"'“‘")


def jargon_paragraphs(entry: str) -> list[str]:
    """The Jargon File: the body, with etymology brackets and sense numbers dropped."""
    return [re.sub(r"^(?:\[[^\]]*\]\s*|\d+\.\s*)+", "", _BRACES.sub(r"\1", paragraph))
            for paragraph in _entry_body(entry)]


def foldoc_paragraphs(entry: str) -> list[str]:
    """FOLDOC: the body, with <subject> tags, URLs, link braces and the date dropped."""
    kept = []
    for paragraph in _entry_body(entry):
        paragraph = _URL.sub("", re.sub(r"^(?:<[^>]*>\s*|\d+\.\s*)+", "", paragraph))
        paragraph = re.sub(r"\s+([.,;:])", r"\1", _BRACES.sub(r"\1", paragraph))
        if not re.fullmatch(r"\(\d{4}-\d{2}-\d{2}\)", paragraph.strip()):
            kept.append(paragraph)
    return kept


def devil_paragraphs(entry: str) -> list[str]:
    """The Devil's Dictionary: the definition and its verse, the headword and authors dropped."""
    lines = [line for line in entry.splitlines() if len(line) - len(line.lstrip()) < 16]
    text = re.sub(r"^[A-Z][A-Z\-' ]*(?:, [A-Z\-' ]+)*,\s+(?:[a-z]+\.\s*)+", "", "\n".join(lines))
    return split_paragraphs(re.sub(r"\b_([^_]+)_\b", r"\1", text))


def dictd_reader(paragraphs_of: Callable[[str], list[str]]) -> Reader:
    """The reader of a dictd database whose entries' paragraphs `paragraphs_of` picks: a
    document per entry, of its sentences that read as a dictionary's prose."""
    def documents(index_path: str) -> Iterator[Document]:
        for entry in dictd_entries(index_path):
            sentences = [sentence for sentence in prose_sentences(paragraphs_of(entry))
                         if dictionary_sentence(sentence)]
            if len(sentences) >= MIN_SENTENCES:
                yield sentences
    documents.__doc__ = f"dictd entries as documents, paragraphs by {paragraphs_of.__name__}."
    return documents
