"""Fortune files (strfile text, `%` lines between): a document per fortune (quotations, jokes,
short literature), attributions dropped."""

from __future__ import annotations

import re
from typing import Iterator

from albert_lab.corpora.prose.documents import MIN_SENTENCES, Document, read_text
from albert_lab.corpora.prose.filters import prose_sentences


def fortune_documents(path: str) -> Iterator[Document]:
    """The fortunes of a strfile text file (`%` lines between them), attributions dropped."""
    for fortune in re.split(r"^%[ \t]*$", read_text(path), flags=re.M):
        lines = [line.strip() for line in fortune.splitlines()]
        lines = [line for line in lines if line and not line.startswith(("--", "—", "- "))]
        sentences = prose_sentences([" ".join(lines)])
        if len(sentences) >= MIN_SENTENCES:
            yield sentences
