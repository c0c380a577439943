"""Sentence splitting for sources that are not one sentence per line (TFDS articles).

A small rule-based splitter: paragraphs at line breaks, sentences after `.`, `!` or `?` (and
closing quotes or brackets) followed by whitespace and an upper-case letter, digit or opening
quote. Abbreviations such as "e.g. Foo" split too; for pretraining segments this costs little
(a segment is several sentences), and it keeps the dependency list short. Files in the original
format (one sentence per line) never pass through here.
"""

from __future__ import annotations

import re

# Whitespace after a sentence end (optionally one closing quote or bracket) and before what
# looks like the start of a sentence.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Returns the non-empty sentences of `text`, paragraphs kept apart.

    >>> split_sentences("It rained. Then it stopped!\\nA new paragraph? Yes.")
    ['It rained.', 'Then it stopped!', 'A new paragraph?', 'Yes.']
    """
    sentences = []
    for paragraph in text.splitlines():
        for sentence in _SENTENCE_END.split(paragraph):
            sentence = sentence.strip()
            if sentence:
                sentences.append(sentence)
    return sentences
