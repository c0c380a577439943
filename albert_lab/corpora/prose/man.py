"""Man pages (roff with the man macros) of the Linux man-pages project: a document per
section or subsection; NAME, SYNOPSIS, SEE ALSO, examples, tables and tags dropped."""

from __future__ import annotations

import re
from typing import Iterator

from albert_lab.corpora.prose.documents import Document, long_enough, read_text
from albert_lab.corpora.prose.filters import prose_sentences

_MAN_SKIPPED_SECTIONS = {"NAME", "SYNOPSIS", "SEE ALSO", "COLOPHON", "EXAMPLES", "EXAMPLE",
                         "AUTHORS", "AUTHOR", "COPYRIGHT", "LIBRARY", "FILES"}
_MAN_NO_FILL = {".nf": ".fi", ".EX": ".EE", ".TS": ".TE", ".EQ": ".EN", ".PS": ".PE"}
_MAN_FONTS = {".B", ".I", ".SM", ".SB"}
_MAN_ALTERNATING = {".BR", ".RB", ".BI", ".IB", ".IR", ".RI"}
_MAN_GLYPHS = {"em": "—", "en": "–", "aq": "'", "dq": '"', "lq": "“", "rq": "”", "oq": "‘",
               "cq": "’", "bu": "•", "co": "©", "mu": "×", "hy": "-", "ti": "~", "ha": "^",
               "rs": "\\", "bv": "|", "at": "@", "sh": "#", "Do": "$", "tm": "™", "de": "°"}
_MAN_ESCAPE = re.compile(r"\\(?:f(?:\[[^\]]*\]|\(..|.)|s[+-]?\d|\*?\((..)|\*?\[([^\]]*)\]|(.))")


def _man_escape(match: re.Match) -> str:
    glyph = match.group(1) or match.group(2)
    if glyph is not None:
        return _MAN_GLYPHS.get(glyph, "")
    char = match.group(3)
    return {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "'": "'",
            "`": "`", ".": "."}.get(char or "", "")


def clean_roff(text: str) -> str:
    r"""roff escapes replaced by the characters they stand for; font changes dropped.

    >>> clean_roff(r"\fBls\fP \-l prints \(lqlong\(rq lines\&.")
    'ls -l prints “long” lines.'
    """
    return _MAN_ESCAPE.sub(_man_escape, text)


def _macro_arguments(line: str) -> list[str]:
    return [quoted if quoted or not bare else bare
            for quoted, bare in re.findall(r'"([^"]*)"|(\S+)', line)]


def man_documents_text(text: str) -> Iterator[Document]:
    """The sections of a man page (NAME, SYNOPSIS, SEE ALSO, examples and tables dropped)."""
    paragraphs: list[str] = []
    words: list[str] = []
    section_kept, no_fill_end, skip_tag_line = False, None, False

    def end_paragraph():
        if words and section_kept:
            paragraphs.append(clean_roff(" ".join(words)))
        words.clear()

    for line in text.splitlines():
        if no_fill_end:
            if line.startswith(no_fill_end):
                no_fill_end = None
            continue
        if line.startswith((".\\\"", "'\\\"")) or line == ".":  # comments
            continue
        if line.startswith((".", "'")):
            parts = line.split(None, 1)
            macro, argument = parts[0].replace("'", "."), parts[1] if len(parts) > 1 else ""
            if macro in (".SH", ".SS"):
                end_paragraph()
                yield prose_sentences(paragraphs)
                paragraphs = []
                title = clean_roff(" ".join(_macro_arguments(argument))).upper()
                if macro == ".SH":  # a subsection (.SS) is kept when its section is
                    section_kept = title not in _MAN_SKIPPED_SECTIONS
            elif macro in _MAN_NO_FILL:
                end_paragraph()
                no_fill_end = _MAN_NO_FILL[macro]
            elif macro in _MAN_FONTS or macro in _MAN_ALTERNATING:
                joiner = "" if macro in _MAN_ALTERNATING else " "
                if skip_tag_line:
                    skip_tag_line = False
                else:
                    words.append(joiner.join(_macro_arguments(argument)))
            elif macro in (".UR", ".MT", ".UE", ".ME"):
                if macro in (".UE", ".ME") and argument:
                    words[-1:] = [(words[-1] if words else "") + argument.strip()]
            else:
                end_paragraph()  # .PP, .TP, .IP, .RS, .sp and every other request
                skip_tag_line = macro == ".TP"
            continue
        if skip_tag_line:
            skip_tag_line = False
            continue
        words.append(line)
    end_paragraph()
    yield prose_sentences(paragraphs)


def linux_man_page_documents(path: str) -> Iterator[Document]:
    """The sections of a page of the Linux man-pages project (other pages give nothing)."""
    text = read_text(path)
    header = re.search(r"^\.TH\s.*$", text, re.M)
    if header and "Linux man-pages" in header.group(0):
        yield from long_enough(man_documents_text(text))
