"""English prose from Debian's documentation packages, as documents of sentences.

Each source reads the files one Debian package installs (plain or gzip/dictzip, never the
network) and yields documents: lists of sentences (`data_prep.sentences.split_sentences`), one
document per coherent unit of text (a manual section, an info node, a man page section, a
dictionary entry, a FAQ answer, a chapter). Code, markup, tables, headings and navigation are
dropped, and so is every paragraph that does not read as English prose (`is_prose`); a document
needs two sentences or more. Files are read in sorted order, so a corpus is a pure function of
the installed packages.

`SOURCES` is the registry: per source name, the package that provides it, the files read (glob
patterns under `ROOT`), its licence (from /usr/share/doc/<package>/copyright) and its reader.
`open_sources("debian-prose")` reads every installed source; a source whose package is missing
raises a `DataPrepError` naming the package to install.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import glob
import gzip
import html
import html.parser
import os
import re
import struct
import subprocess
import zlib
from typing import Callable, Iterable, Iterator

from albert_tf.text.options import DataPrepError
from data_prep.sentences import split_sentences

ROOT = "/"  # the registry's paths are read under this folder (the tests point it elsewhere)
DPKG_QUERY = "dpkg-query"  # reads the installed version of a package for the provenance record
COMBINED = "debian-prose"
MIN_SENTENCES = 2

Document = list[str]
Reader = Callable[[str], Iterator[Document]]


# ---------------------------------------------------------------------------------------------
# Shared helpers: reading files, telling prose from code, making documents.

def read_text(path: str) -> str:
    """The text of a plain, .gz or dictzip (.dz) file, as UTF-8 (bad bytes replaced)."""
    opener = gzip.open if path.endswith((".gz", ".dz")) else open
    try:
        with opener(path, "rb") as file:
            data = file.read()
    except (OSError, EOFError, zlib.error) as error:
        raise DataPrepError(f"cannot read {path}: {error}") from None
    return data.decode("utf-8", errors="replace")


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


def collapse(text: str) -> str:
    return " ".join(text.split())


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


def _long_enough(documents: Iterable[Document]) -> Iterator[Document]:
    return (document for document in documents if len(document) >= MIN_SENTENCES)


def _paragraphs(text: str) -> list[str]:
    """Blocks of text between blank lines, each with its lines joined."""
    return [collapse(block) for block in re.split(r"\n[ \t]*\n", text) if block.strip()]


# ---------------------------------------------------------------------------------------------
# HTML (DocBook, Publican, Sphinx and hand-written manuals): a document per section.

_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_SKIPPED_TAGS = {"script", "style", "pre", "table", "head", "nav", "header", "footer", "svg",
                 "math", "form", "select", "button", "textarea", "object", "title"}
_SKIPPED_CLASSES = {
    "navheader", "navfooter", "toc", "docnav", "footnotes", "footnote", "indexterm",
    "legalnotice", "authorgroup", "revhistory", "copyright", "sphinxsidebar", "related",
    "footer", "headerlink", "admonition-title", "breadcrumbs", "menu", "searchmenu",
    "fancy_toc", "tagline", "toplang", "bottomlang", "lang-toggle", "quickview", "screen",
    "programlisting", "synopsis", "cmdsynopsis", "funcsynopsis", "highlight", "literal-block",
    "doctest", "sig", "sidebar-title", "index", "glossary-index"}
_SKIPPED_IDS = {"quickview", "page-header", "footer", "path", "sidebar", "nav", "toc"}
_ASIDE_CLASSES = {"note", "tip", "warning", "caution", "important", "sidebar", "admonition"}
_BLOCK_TAGS = {"p", "li", "dd", "dt", "div", "blockquote", "td", "th", "br", "section",
               "article", "ul", "ol", "dl", "figure", "figcaption", "body", "tr", "caption",
               "hr", "center", "aside", "main"}
_VOID_TAGS = {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "wbr"}


class _HtmlProse(html.parser.HTMLParser):
    """Collects the paragraphs of an HTML page, starting a document at each heading."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.documents: list[Document] = []
        self.paragraphs: list[str] = []
        self.words: list[str] = []
        self.skipping: tuple[str, int] | None = None  # (tag, nesting) of a dropped element
        self.heading: str | None = None
        self.aside_divs = 0  # open divs of a note, tip or sidebar (their titles are no sections)

    def handle_starttag(self, tag, attrs):
        if self.skipping:
            if tag == self.skipping[0]:
                self.skipping = (tag, self.skipping[1] + 1)
            return
        attributes = dict(attrs)
        classes = set((attributes.get("class") or "").split())
        if tag not in _VOID_TAGS and (tag in _SKIPPED_TAGS or classes & _SKIPPED_CLASSES
                                      or attributes.get("id") in _SKIPPED_IDS):
            if tag in _BLOCK_TAGS or tag in _SKIPPED_TAGS:
                self._end_paragraph()  # an inline element (an index term) leaves it whole
            self.skipping = (tag, 1)
        elif tag in _HEADINGS:
            if not self.aside_divs:
                self._end_document()
            self._end_paragraph()
            self.heading = tag
        elif tag in _BLOCK_TAGS:
            self._end_paragraph()
            if tag == "div" and (self.aside_divs or classes & _ASIDE_CLASSES):
                self.aside_divs += 1

    def handle_endtag(self, tag):
        if self.skipping:
            if tag == self.skipping[0]:
                depth = self.skipping[1] - 1
                self.skipping = (tag, depth) if depth else None
            return
        if tag == self.heading:
            self.heading = None
            self.words.clear()  # headings are titles, not prose
        elif tag in _BLOCK_TAGS:
            self._end_paragraph()
            if tag == "div" and self.aside_divs:
                self.aside_divs -= 1

    def handle_data(self, data):
        if not self.skipping:
            self.words.append(data)

    def _end_paragraph(self):
        text = collapse("".join(self.words))
        self.words.clear()
        if text and not self.heading:
            self.paragraphs.append(text)

    def _end_document(self):
        self._end_paragraph()
        self.documents.append(prose_sentences(self.paragraphs))
        self.paragraphs.clear()

    def close(self):
        super().close()
        self._end_document()


def html_documents(path: str) -> Iterator[Document]:
    """The sections of an HTML page (a document per heading), prose paragraphs only."""
    parser = _HtmlProse()
    parser.feed(read_text(path))
    parser.close()
    yield from _long_enough(parser.documents)


# ---------------------------------------------------------------------------------------------
# reStructuredText sources of Sphinx manuals (the `_sources/*.rst.txt` they install).

def rst_documents_of(path: str) -> Iterator[Document]:
    """The sections of a reST file as `local_corpus.rst_documents` gives them (python-docs)."""
    from data_prep.local_corpus import rst_documents
    yield from rst_documents(read_text(path))


def rst_prose_documents_of(path: str) -> Iterator[Document]:
    """The sections of a reST file, keeping only the sentences that read as prose."""
    from data_prep.local_corpus import rst_documents
    documents = rst_documents(read_text(path))
    yield from _long_enough([sentence for sentence in document if is_prose(sentence)]
                            for document in documents)


# ---------------------------------------------------------------------------------------------
# POD (Perl's manuals): a document per =head and per named =item.

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
    yield from _long_enough(pod_documents_text(read_text(path)))


# ---------------------------------------------------------------------------------------------
# Info manuals (GNU texinfo output, possibly split into .info-N.gz parts): a document per node.

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
    return _paragraphs(text)


def info_documents(path: str) -> Iterator[Document]:
    """The nodes of an info manual, one document each."""
    for part in _info_parts(path):
        for node in part.split("\x1f\n"):
            yield from _long_enough([prose_sentences(info_node_paragraphs(node))])


# ---------------------------------------------------------------------------------------------
# Man pages (roff with the man macros): a document per section or subsection.

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
        yield from _long_enough(man_documents_text(text))


# ---------------------------------------------------------------------------------------------
# Fortune files: a document per fortune (quotations, jokes, short literature).

def fortune_documents(path: str) -> Iterator[Document]:
    """The fortunes of a strfile text file (`%` lines between them), attributions dropped."""
    for fortune in re.split(r"^%[ \t]*$", read_text(path), flags=re.M):
        lines = [line.strip() for line in fortune.splitlines()]
        lines = [line for line in lines if line and not line.startswith(("--", "—", "- "))]
        sentences = prose_sentences([" ".join(lines)])
        if len(sentences) >= MIN_SENTENCES:
            yield sentences


# ---------------------------------------------------------------------------------------------
# dictd databases (.index + .dict.dz): a document per entry.

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
    return _paragraphs(entry)[1:]


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
    return _paragraphs(re.sub(r"\b_([^_]+)_\b", r"\1", text))


def _dictd_reader(paragraphs_of: Callable[[str], list[str]]) -> Reader:
    def documents(index_path: str) -> Iterator[Document]:
        for entry in dictd_entries(index_path):
            sentences = [sentence for sentence in prose_sentences(paragraphs_of(entry))
                         if dictionary_sentence(sentence)]
            if len(sentences) >= MIN_SENTENCES:
                yield sentences
    documents.__doc__ = f"dictd entries as documents, paragraphs by {paragraphs_of.__name__}."
    return documents


# ---------------------------------------------------------------------------------------------
# A SWORD Bible module (zText, OSIS markup, a compressed block per book): a document per chapter.

def sword_blocks(index_path: str) -> Iterator[str]:
    """The decompressed blocks of a zText module part (`ot.bzs` indexes `ot.bzz`)."""
    data_path = index_path[:-1] + "z"
    with open(index_path, "rb") as file:
        index = file.read()
    with open(data_path, "rb") as file:
        data = file.read()
    for start in range(0, len(index) - 11, 12):
        offset, size, _ = struct.unpack("<III", index[start:start + 12])
        try:
            yield zlib.decompress(data[offset:offset + size]).decode("utf-8", errors="replace")
        except zlib.error as error:
            raise DataPrepError(f"{data_path}: block {start // 12} is not zlib data "
                                f"({error}); expected a zText module with CompressType=ZIP")


def osis_chapter_paragraphs(osis: str) -> Iterator[list[str]]:
    """The paragraphs of each chapter of an OSIS text: notes, titles and tags dropped."""
    osis = re.sub(r"<note\b.*?</note>|<title\b.*?</title>", " ", osis, flags=re.S)
    for chapter in re.split(r"<chapter\b[^>]*/>", osis):
        # paragraphs and stanzas break; verse lines, words and milestones are just text
        chapter = re.sub(r'<div\b[^>]*\btype="x-p"[^>]*>|</?(?:p|lg)\b[^>]*>', "\n\n", chapter)
        text = html.unescape(re.sub(r"<[^>]*>", "", chapter))
        yield _paragraphs(text)


def sword_documents(index_path: str) -> Iterator[Document]:
    for block in sword_blocks(index_path):
        for paragraphs in osis_chapter_paragraphs(block):
            yield from _long_enough([prose_sentences(paragraphs)])


# ---------------------------------------------------------------------------------------------
# Character vectors of an R package's lazy-load data (janeaustenr: a novel per vector).

class _RReader:
    """Just enough of R's XDR serialization to read lists, names and character vectors."""

    def __init__(self, data: bytes, path: str):
        if data[:2] != b"X\n":
            raise DataPrepError(f"{path}: expected R's XDR serialization (X\\n), got "
                                f"{data[:2]!r}")
        self.data, self.path, self.at = data, path, 2
        self.references: list = []
        version = self.integer()
        self.integer()  # the R version that wrote it
        self.integer()  # the oldest R version that can read it
        if version == 3:
            name_length = self.integer()
            self.at += name_length  # the native encoding's name

    def integer(self) -> int:
        (value,) = struct.unpack(">i", self.data[self.at:self.at + 4])
        self.at += 4
        return value

    def length(self) -> int:
        length = self.integer()
        return length if length != -1 else (self.integer() << 32) + self.integer()

    def item(self):
        flags = self.integer()
        kind, has_attributes, has_tag = flags & 0xFF, flags & (1 << 9), flags & (1 << 10)
        if kind == 254:  # NULL
            return None
        if kind == 255:  # a reference to an earlier symbol
            index = flags >> 8 or self.integer()
            return self.references[index - 1]
        if kind == 1:  # a symbol: its name
            name = self.item()
            self.references.append(name)
            return name
        if kind == 2:  # a pairlist (attributes are one), as a dict of tag to value
            if has_attributes:
                self.item()  # a pairlist's own attributes: not needed here
            tag = self.item() if has_tag else None
            value, rest = self.item(), self.item()
            return {tag: value, **(rest or {})}
        if kind == 9:  # a string
            length = self.integer()
            if length == -1:
                return None
            raw = self.data[self.at:self.at + length]
            self.at += length
            return raw.decode("latin-1" if flags & (1 << 14) else "utf-8", errors="replace")
        if kind in (10, 13):  # logical and integer vectors
            count = self.length()
            values = list(struct.unpack(f">{count}i", self.data[self.at:self.at + 4 * count]))
            self.at += 4 * count
        elif kind in (16, 19):  # character vectors and lists
            values = [self.item() for _ in range(self.length())]
        else:
            raise DataPrepError(f"{self.path}: R object of type {kind} at byte {self.at}; "
                                "expected lists, names and character vectors only")
        attributes = self.item() if has_attributes else {}
        names = (attributes or {}).get("names")
        return dict(zip(names, values)) if names else values


def r_lazy_load(index_path: str) -> dict:
    """The objects of an R lazy-load database (`Rdata.rdx` indexes `Rdata.rdb`), by name."""
    with open(index_path, "rb") as file:
        packed = file.read()
    with open(index_path[:-1] + "b", "rb") as file:
        database = file.read()
    try:
        index = gzip.decompress(packed) if packed[:2] == b"\x1f\x8b" else zlib.decompress(
            packed[4:])
        index = _RReader(index, index_path).item()
        objects = {}
        for name, (offset, size) in index["variables"].items():
            # each object: its serialized length (4 bytes), then zlib data
            payload = zlib.decompress(database[offset + 4:offset + size])
            objects[name] = _RReader(payload, index_path[:-1] + "b").item()
    except (zlib.error, OSError, EOFError, KeyError, TypeError, ValueError, struct.error) as error:
        raise DataPrepError(f"{index_path}: not an R lazy-load index of zlib-compressed "
                            f"objects ({error!r})") from None
    return objects


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
                sentences = [sentence for paragraph in _paragraphs(text)
                             if not paragraph.isupper() for sentence in sentences_of(paragraph)]
                if len(sentences) >= MIN_SENTENCES:
                    yield sentences
            chapter, started = [], True
        elif started:
            chapter.append(line or "")


def r_novel_documents(index_path: str) -> Iterator[Document]:
    for _, lines in sorted(r_lazy_load(index_path).items()):
        if isinstance(lines, list) and all(isinstance(line, (str, type(None))) for line in lines):
            yield from novel_chapters(lines)


# ---------------------------------------------------------------------------------------------
# The registry.

@dataclasses.dataclass(frozen=True)
class DebianSource:
    """A corpus source: the files of one Debian package and how to read them."""

    name: str
    package: str
    paths: tuple[str, ...]  # glob patterns (`**` for any depth), read under ROOT
    licence: str  # as /usr/share/doc/<package>/copyright states it for the text read
    reader: Reader  # one file -> its documents
    skip: tuple[str, ...] = ()  # file-name patterns not read
    description: str = ""
    drop_repeats: bool = True  # a document identical to an earlier one (boilerplate) is left out

    def files(self) -> list[str]:
        found: dict[str, str] = {}
        for pattern in self.paths:
            for path in glob.glob(os.path.join(ROOT, pattern.lstrip("/")), recursive=True):
                name = os.path.basename(path)
                if os.path.isfile(path) and not any(fnmatch.fnmatch(name, skipped)
                                                    for skipped in self.skip):
                    found.setdefault(os.path.realpath(path), path)  # a file once, links aside
        return sorted(found.values())

    def missing_message(self) -> str:
        return (f"corpus source {self.name!r} reads Debian's {self.package} package, which is "
                f"not installed (nothing matches {', '.join(self.paths)}): install it with "
                f"`apt-get install {self.package}`")

    def documents(self) -> Iterator[Document]:
        """Its documents, file by file in sorted order; an error at once if nothing is there."""
        files = self.files()
        if not files:
            raise DataPrepError(self.missing_message())
        documents = (document for path in files for document in self.reader(path))
        return _first_of_each(documents) if self.drop_repeats else documents


def _first_of_each(documents: Iterable[Document]) -> Iterator[Document]:
    seen = set()
    for document in documents:
        key = hash(tuple(document))
        if key not in seen:
            seen.add(key)
            yield document


def _source(name, package, paths, licence, reader, skip=(), description="", drop_repeats=True):
    paths = (paths,) if isinstance(paths, str) else tuple(paths)
    return DebianSource(name, package, paths, licence, reader, tuple(skip), description,
                        drop_repeats)


_INFO = "/usr/share/info/"
_GFDL_NIV = "GFDL-1.3+ (no invariant sections, no cover texts)"
SOURCES: dict[str, DebianSource] = {source.name: source for source in [
    _source("debian-handbook", "debian-handbook",
            "/usr/share/doc/debian-handbook/html/en-US/*.html", "GPL-2+ or CC-BY-SA-3.0",
            html_documents, ("index.html", "ix01.html"),
            "The Debian Administrator's Handbook"),
    _source("debian-reference", "debian-reference-en", "/usr/share/debian-reference/*.en.html",
            "GPL-2+", html_documents, ("index.en.html",), "Debian Reference"),
    _source("developers-reference", "developers-reference",
            "/usr/share/developers-reference/_sources/*.rst.txt", "GPL-2",
            rst_prose_documents_of, ("index.rst.txt",), "Debian Developer's Reference"),
    _source("debian-policy", "debian-policy",
            "/usr/share/doc/debian-policy/policy.html/_sources/*.rst.txt", "GPL-2+",
            rst_prose_documents_of, ("index.rst.txt",), "Debian Policy Manual"),
    _source("maint-guide", "maint-guide", "/usr/share/doc/maint-guide/html/*.en.html",
            "GPL-2+", html_documents, ("index.en.html",), "Debian New Maintainers' Guide"),
    _source("debian-faq", "debian-faq", "/usr/share/doc/debian/FAQ/*.en.html",
            "permissive (copy, modify and distribute with the notice; SPI)", html_documents,
            ("index.en.html",), "The Debian GNU/Linux FAQ"),
    _source("securing-debian", "harden-doc", "/usr/share/doc/harden-doc/html/en-US/*.html",
            "GPL-2+", html_documents, ("index.html",), "Securing Debian Manual"),
    _source("debian-history", "debian-history", "/usr/share/doc/debian-history/docs/*.en.html",
            "GPL-2+", html_documents, ("index.en.html",), "A Brief History of Debian"),
    _source("kernel-handbook", "debian-kernel-handbook",
            "/usr/share/doc/debian-kernel-handbook/kernel-handbook.html/*.html", "GPL-2+",
            html_documents, ("index.html",), "Debian Linux Kernel Handbook"),
    _source("python-docs", "python3.11-doc", "/usr/share/doc/python3.11/html/_sources/**/*.rst.txt",
            "PSF-2.0", rst_documents_of, (), "The Python 3.11 documentation",
            drop_repeats=False),  # as local_corpus always wrote it: old corpora stay the same
    _source("perl-doc", "perl-doc", "/usr/share/perl/5.*/pod/*.pod", "GPL-1+ or Artistic",
            pod_documents, ("perltoc.pod", "perlcn.pod", "perljp.pod", "perlko.pod", "perltw.pod",
                            "perlgpl.pod", "perlartistic.pod", "perluniprops.pod"),
            "Perl's manuals (perlintro, perlfaq, perlfunc, ...)"),
    _source("gcide", "dict-gcide", "/usr/share/dictd/gcide.index", "GPL-2+",
            _dictd_reader(gcide_paragraphs),
            "The Collaborative International Dictionary of English (Webster's 1913 + WordNet)"),
    _source("jargon", "dict-jargon", "/usr/share/dictd/jargon.index", "public domain",
            _dictd_reader(jargon_paragraphs), "The Jargon File"),
    _source("foldoc", "dict-foldoc", "/usr/share/dictd/foldoc.index",
            "GFDL-1.1+ (no invariant sections, no cover texts)", _dictd_reader(foldoc_paragraphs),
            "The Free On-line Dictionary of Computing"),
    _source("devils-dictionary", "dict-devil", "/usr/share/dictd/devil.index", "public domain",
            _dictd_reader(devil_paragraphs), "Ambrose Bierce, The Devil's Dictionary"),
    _source("man-pages", "manpages", "/usr/share/man/man[145678]/*.gz",
            "Linux-man-pages-copyleft, GPL-2+ and others (per page)", linux_man_page_documents,
            (), "Linux man-pages: files, devices, overviews (sections 1, 4-8)"),
    _source("man-pages-dev", "manpages-dev", "/usr/share/man/man[23]/*.gz",
            "Linux-man-pages-copyleft, GPL-2+ and others (per page)", linux_man_page_documents,
            (), "Linux man-pages: system calls and C library (sections 2, 3)"),
    _source("fortunes", "fortunes", "/usr/share/games/fortunes/*",
            "BSD-3-clause (the package; the quotations state none of their own)",
            fortune_documents, ("*.dat", "*.u8"),
            "fortune cookies: quotations, literature, humour (with fortunes-min's files)"),
    _source("gnu-standards", "gnu-standards", (_INFO + "standards.info*.gz",
                                               _INFO + "maintain.info*.gz"),
            "GFDL-1.3+ (no invariant sections, no cover texts)", info_documents,
            ("*.info-*",), "GNU Coding Standards and Information for Maintainers"),
    _source("bash-manual", "bash-doc", _INFO + "bash.info*.gz", _GFDL_NIV, info_documents,
            ("*.info-*",), "Bash Reference Manual"),
    _source("autoconf-manual", "autoconf-doc", _INFO + "autoconf.info*.gz", _GFDL_NIV,
            info_documents, ("*.info-*",), "Autoconf manual"),
    _source("libtool-manual", "libtool-doc", _INFO + "libtool.info*.gz", _GFDL_NIV,
            info_documents, ("*.info-*",), "GNU Libtool manual"),
    _source("gettext-manual", "gettext", _INFO + "gettext.info*.gz", _GFDL_NIV, info_documents,
            ("*.info-*",), "GNU gettext manual"),
    _source("coreutils-manual", "coreutils", _INFO + "coreutils.info*.gz", _GFDL_NIV,
            info_documents, ("*.info-*",), "GNU Coreutils manual"),
    _source("findutils-manual", "findutils", (_INFO + "find.info*.gz",
                                              _INFO + "find-maint.info*.gz"),
            _GFDL_NIV, info_documents, ("*.info-*",), "GNU Findutils manuals"),
    _source("sed-manual", "sed", _INFO + "sed.info*.gz", _GFDL_NIV, info_documents,
            ("*.info-*",), "GNU sed manual"),
    _source("diffutils-manual", "diffutils", _INFO + "diffutils.info*.gz", _GFDL_NIV,
            info_documents, ("*.info-*",), "GNU Diffutils manual"),
    _source("postgresql-docs", "postgresql-doc-15", "/usr/share/doc/postgresql-doc-15/html/*.html",
            "PostgreSQL (BSD-like)", html_documents, ("index.html", "bookindex.html"),
            "PostgreSQL 15 documentation"),
    _source("sqlite-docs", "sqlite3-doc", ("/usr/share/doc/sqlite3/*.html",
                                          "/usr/share/doc/sqlite3/c3ref/*.html"),
            "public domain", html_documents, ("index.html", "docs.html", "sitemap.html"),
            "SQLite documentation"),
    _source("apache-docs", "apache2-doc", "/usr/share/doc/apache2-doc/manual/en/**/*.html",
            "Apache-2.0", html_documents, ("index.html", "sitemap.html", "quickreference.html"),
            "Apache HTTP Server 2.4 documentation"),
    _source("django-docs", "python-django-doc", "/usr/share/doc/python-django-doc/html/**/*.html",
            "BSD-3-clause", html_documents, ("genindex.html", "py-modindex.html", "search.html",
                                             "contents.html"),
            "Django 3.2 documentation"),
    _source("linux-kernel-docs", "linux-doc-6.1",
            "/usr/share/doc/linux-doc-6.1/html/_sources/**/*.rst.txt", "GPL-2",
            rst_prose_documents_of, ("index.rst.txt",), "The Linux 6.1 kernel documentation"),
    _source("world-english-bible", "sword-text-web",
            "/usr/share/sword/modules/texts/ztext/engWEB2015eb/*.bzs", "public domain",
            sword_documents, (), "The World English Bible (SWORD module)"),
    _source("jane-austen", "r-cran-janeaustenr",
            "/usr/lib/R/site-library/janeaustenr/data/Rdata.rdx",
            "public domain (novels of 1811-1818); package MIT", r_novel_documents, (),
            "Jane Austen's six novels"),
]}
NAMES = (*SOURCES, COMBINED)


# ---------------------------------------------------------------------------------------------
# Opening sources for a corpus, and what the provenance record says about a package.

def package_version(package: str) -> str:
    """The installed version of a Debian package, or "unknown" (no dpkg-query, not installed)."""
    try:
        result = subprocess.run([DPKG_QUERY, "-W", "-f=${Version}", package],
                                capture_output=True, text=True, check=False, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return result.stdout.strip() if result.returncode == 0 and result.stdout.strip() \
        else "unknown"


def origin(source: DebianSource) -> dict:
    """What the provenance record says about where a source's text came from."""
    return {"package": source.package, "version": package_version(source.package),
            "licence": source.licence, "paths": list(source.paths),
            "description": source.description}


def open_sources(name: str) -> tuple[list[tuple[str, dict, Iterator[Document]]], dict[str, str]]:
    """([(source, origin, documents)], {missing source: the command that installs it}).

    A single source that is not installed is an error; `debian-prose` reads every installed
    source and is an error only when none is.
    """
    if name not in NAMES:
        raise DataPrepError(f"unknown Debian corpus source {name!r} (known: {', '.join(NAMES)})")
    wanted = list(SOURCES.values()) if name == COMBINED else [SOURCES[name]]
    opened, missing = [], {}
    for source in wanted:
        if source.files():
            opened.append((source.name, origin(source), source.documents()))
        else:
            missing[source.name] = f"apt-get install {source.package}"
    if not opened:
        if name != COMBINED:
            raise DataPrepError(SOURCES[name].missing_message())
        packages = " ".join(source.package for source in wanted)
        raise DataPrepError(f"corpus source {COMBINED!r} found none of its Debian packages "
                            f"installed; install them with `apt-get install {packages}`")
    return opened, missing
