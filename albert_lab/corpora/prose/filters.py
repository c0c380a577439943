"""Telling prose from code and cutting it into sentences: the filter every prose reader
applies to its paragraphs."""

from __future__ import annotations

import re
from typing import Iterable, Iterator

from albert_lab.corpora.prose.documents import Document, collapse
from data_prep.sentences import split_sentences

_ENDS_SENTENCE = re.compile(r"[.!?:][\"'’”)\]]*$")
_CODE_MARKS = re.compile(r"[{}\[\]<>=;$|\\`^@#]")


def is_prose(text: str) -> bool:
    """Whether a paragraph reads as English prose, not code, a table, a list of names or a title.

    Prose here: three words or more, ends like a sentence, mostly letters, hardly any of the
    characters code is made of, and Latin-alphabet letters (other scripts are other languages).

    >>> is_prose("The daemon reads its configuration at start-up.")
    True
    >>> is_prose("if (x > 0) { y = x; }"), is_prose("Installing the system")
    (False, False)
    """
    if len(text.split()) < 3 or not _ENDS_SENTENCE.search(text):
        return False
    visible = len(text) - text.count(" ")
    letters = sum(char.isalpha() for char in text)
    latin = sum(char.isalpha() and char < "\u0250" for char in text)
    return (letters >= 0.7 * visible and latin >= 0.95 * letters
            and len(_CODE_MARKS.findall(text)) <= 0.06 * visible)


# Abbreviations after which `split_sentences` cuts, though a sentence rarely ends there.
_ABBREVIATION_AT_END = re.compile(r"(?:^|[\s(])(?:Mr|Mrs|Ms|Dr|St|Messrs|Prof|Rev|Capt|Col|Lt|"
                                  r"Sgt|Mt|Fig|Vol|e\.g|i\.e|cf|vs|viz|esp|approx)\.$")


# Sentence ends that `split_sentences` misses: before an opening curly quote, after a closing one.
_CURLY_QUOTE_CUT = re.compile(r"(?<=[.!?])\s+(?=[“‘][A-Z])|(?<=[.!?][’”])\s+(?=[“‘]?[A-Z])")


def sentences_of(paragraph: str) -> Document:
    """`split_sentences`, also cut at curly quotes, not cut after "Mr.", "e.g." and the like.

    >>> sentences_of("Mr. Darcy smiled. He left, e.g. at noon. “Why?” ‘No.’ Then")
    ['Mr. Darcy smiled.', 'He left, e.g. at noon.', '“Why?”', '‘No.’', 'Then']
    """
    sentences: Document = []
    for sentence in (part for piece in split_sentences(paragraph)
                     for part in _CURLY_QUOTE_CUT.split(piece)):
        if sentences and _ABBREVIATION_AT_END.search(sentences[-1]):
            sentences[-1] += " " + sentence
        else:
            sentences.append(sentence)
    return sentences


def prose_sentences(paragraphs: Iterable[str]) -> Document:
    """The sentences of the paragraphs that read as prose (see `is_prose`)."""
    sentences: Document = []
    for paragraph in paragraphs:
        paragraph = collapse(paragraph)
        if is_prose(paragraph):
            sentences.extend(sentences_of(paragraph))
    return sentences


def without_repeats(documents: Iterable[Document]) -> Iterator[Document]:
    """Each document once: one identical to an earlier one (boilerplate) is left out."""
    seen = set()
    for document in documents:
        key = hash(tuple(document))
        if key not in seen:
            seen.add(key)
            yield document
