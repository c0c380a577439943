"""POD (Perl's manuals): a document per =head and per named =item, verbatim code dropped."""

from __future__ import annotations

import html
import re
from typing import Iterator

from albert_lab.corpora.prose.documents import Document, long_enough, read_text
from albert_lab.corpora.prose.filters import prose_sentences

_POD_ENTITIES = {"lt": "<", "gt": ">", "verbar": "|", "sol": "/", "amp": "&", "quot": '"',
                 "apos": "'", "nbsp": " "}
# A code with n >= 2 angle brackets, `C<< $a->b >>`: the opening (a letter, n '<' and
# whitespace) and the closing (whitespace and n '>'), found by searches of fixed-length
# patterns, so the scan is linear; one regex for the whole code, `[A-Z]<<\s+(.*?)\s+>>`, was
# cubic on long runs of spaces without a closing. `_replace_nested` gives what it gave.
_POD_NESTED = [(n, re.compile(rf"[A-Z]{'<' * n}\s"), re.compile(rf"\s{'>' * n}"))
               for n in (4, 3, 2)]
_SPACES = re.compile(r"\s*")
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
    for brackets, opening, closing in _POD_NESTED:
        text = _replace_nested(text, brackets, opening, closing)
    previous = None
    while previous != text:
        previous, text = text, _POD_CODE.sub(_pod_code, text)
    return text.replace("\0", "<").replace("\1", ">")


def _replace_nested(text: str, brackets: int, opening: re.Pattern,
                    closing: re.Pattern) -> str:
    """`text` with each code of `brackets` angle brackets (`X<< inner >>`) replaced by its
    inner text, whose own angle brackets are masked as NUL and \\1 until `clean_pod` ends.

    The inner text starts after the whitespace that follows the opening and ends at the
    first closing after it; failing that, an opening whose whitespace (two characters or
    more) runs into the closing is an empty code."""
    pieces, copied, searched, closings_left = [], 0, 0, True
    while (start := opening.search(text, searched)) is not None:
        inner_start = _SPACES.match(text, start.end()).end()
        end = closing.search(text, inner_start) if closings_left else None
        if end is not None:
            inner, stop = text[inner_start:end.start()].rstrip(), end.end()
        elif (text.startswith(">" * brackets, inner_start)
              and inner_start - start.end() >= 1):
            inner, stop = "", inner_start + brackets
        else:
            closings_left = False  # none after here: later openings cannot find one either
            searched = start.start() + 1
            continue
        pieces += [text[copied:start.start()], inner.replace("<", "\0").replace(">", "\1")]
        copied = searched = stop
    return "".join(pieces) + text[copied:]


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
