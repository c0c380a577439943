"""Info manuals (GNU texinfo output, possibly split into .info-N.gz parts): a document per
node, menus, footnotes, examples and definition headers dropped."""

from __future__ import annotations

import os
import re
from typing import Iterator

from albert_lab.corpora.prose.documents import Document, long_enough, read_text, split_paragraphs
from albert_lab.corpora.prose.filters import prose_sentences
from albert_tf.text.options import DataPrepError

_INFO_UNDERLINE = re.compile(r"^[*=\-.]{3,}\s*$")
# a cross-reference, "*Note Label::" or "*note Label: (manual)Node." -> "See Label"
_INFO_NOTE = re.compile(r"(\b[Ss]ee\s+)?\*([Nn])ote\s+([^:]+?)(?:::|:\s+(?:\([^)]*\))?[^,.;)]+)")


def _info_parts(path: str) -> list[str]:
    """The text of an info file, or of its parts in order when it is split (`Indirect:`)."""
    text = read_text(path)
    indirect = re.search(r"\x1f\nIndirect:\n(.*?)\x1f", text, re.S)
    if not indirect:
        return [text]
    folder = os.path.dirname(path)
    parts = []
    for line in indirect.group(1).splitlines():
        name = line.split(":")[0].strip()
        if name:
            part = [candidate for candidate in (name, name + ".gz")
                    if os.path.exists(os.path.join(folder, candidate))]
            if not part:
                raise DataPrepError(f"{path} names the part {name}, which is not in {folder}")
            parts.append(read_text(os.path.join(folder, part[0])))
    return parts


def _info_reference(match: re.Match) -> str:
    see = match.group(1) or ("See " if match.group(2) == "N" else "see ")
    return see + match.group(3)


def info_node_paragraphs(node: str) -> list[str]:
    """The prose paragraphs of one info node: header, title, menu and footnotes dropped."""
    lines = node.split("\n")
    if not lines or not lines[0].startswith("File:"):
        return []
    kept = []
    in_definition_header = False
    for index, line in enumerate(lines[1:], start=1):
        if line.startswith("* Menu:") or "-------- Footnotes --------" in line:
            break
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if _INFO_UNDERLINE.match(line) or (_INFO_UNDERLINE.match(following) and line.strip()):
            continue  # a title and its underline
        indent = len(line) - len(line.lstrip())
        if line.lstrip().startswith("-- ") or (in_definition_header and indent >= 10):
            in_definition_header = True  # a definition's header (-- Function: name args)
            continue
        in_definition_header = False
        kept.append(re.sub(r"^\s*(?:[*•]|\d+\.)\s+", "", line))
    text = _INFO_NOTE.sub(_info_reference, "\n".join(kept))
    return split_paragraphs(text)


def info_documents(path: str) -> Iterator[Document]:
    """The nodes of an info manual, one document each."""
    for part in _info_parts(path):
        for node in part.split("\x1f\n"):
            yield from long_enough([prose_sentences(info_node_paragraphs(node))])
