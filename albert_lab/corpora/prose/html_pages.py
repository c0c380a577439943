"""HTML manuals (DocBook, Publican, Sphinx and hand-written pages): a document per section."""

from __future__ import annotations

import html.parser
from typing import Iterator

from albert_lab.corpora.prose.documents import Document, collapse, long_enough, read_text
from albert_lab.corpora.prose.filters import prose_sentences

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
    yield from long_enough(parser.documents)
