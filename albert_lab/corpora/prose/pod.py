"""POD (Perl's manuals): a document per =head and per named =item, verbatim code dropped."""

from __future__ import annotations

import html
import re
from typing import Iterator

from albert_lab.corpora.prose.documents import Document, long_enough, read_text
from albert_lab.corpora.prose.filters import prose_sentences

_POD_ENTITIES = {"lt": "<", "gt": ">", "verbar": "|", "sol": "/", "amp": "&", "quot": '"',
                 "apos": "'", "nbsp": " "}
_POD_NESTED = [re.compile(rf"[A-Z]{'<' * n}\s+(.*?)\s+{'>' * n}", re.S) for n in (4, 3, 2)]
_POD_CODE = re.compile(r"([A-Z])<([^<>]*)>")


def _pod_code(match: re.Match) -> str:
    code, text = match.group(1), match.group(2)
    if code in "XZ":
        return ""
    if code == "E":
        number = re.fullmatch(r"(0x[0-9a-fA-F]+)|(0[0-7]*)|(\d+)", text)
        if number:
            base = 16 if number.group(1) else 8 if number.group(2) else 10
            return chr(int(text, base))
        return _POD_ENTITIES.get(text, html.unescape(f"&{text};"))
    if code == "L":
        text = text.split("|", 1)[0] if "|" in text else text.replace('"', "").replace("/", " ")
    return text


def clean_pod(text: str) -> str:
    """POD formatting codes (B<>, C<< >>, L<text|target>, E<lt>...) replaced by their text.

    >>> clean_pod("Use B<open> with C<< $fh->print >> (see L<the manual|perlfunc>) E<lt>3")
    'Use open with $fh->print (see the manual) <3'
    """
    for pattern in _POD_NESTED:
        text = pattern.sub(lambda match: match.group(1).replace("<", "\0").replace(">", "\1"),
                           text)
    previous = None
    while previous != text:
        previous, text = text, _POD_CODE.sub(_pod_code, text)
    return text.replace("\0", "<").replace("\1", ">")


def pod_documents_text(text: str) -> Iterator[Document]:
    """The sections of a POD text: verbatim (indented) paragraphs and =begin blocks dropped."""
    paragraphs: list[str] = []
    in_pod, skipping_block = True, None
    for block in re.split(r"\n[ \t]*\n", text):
        if not block.strip():
            continue
        command = re.match(r"=(\w+)\s*(.*)", block, re.S)
        if command:
            name, argument = command.group(1), command.group(2).strip()
            in_pod = name != "cut"
            if skipping_block:
                skipping_block = None if name == "end" and argument.startswith(
                    skipping_block) else skipping_block
                continue
            if name == "begin":
                skipping_block = argument.split()[0] if argument else ""
            new_section = name.startswith("head") or (
                name == "item" and argument not in ("", "*") and not argument[:1].isdigit())
            if new_section:
                yield prose_sentences(paragraphs)
                paragraphs = []
            continue
        if in_pod and not skipping_block and not block[:1].isspace():
            paragraphs.append(clean_pod(block))
    yield prose_sentences(paragraphs)


def pod_documents(path: str) -> Iterator[Document]:
    """The sections of a .pod file (see `pod_documents_text`) of two sentences or more."""
    yield from long_enough(pod_documents_text(read_text(path)))
