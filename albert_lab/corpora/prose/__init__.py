"""English prose from Debian's documentation packages, as documents of sentences.

Each source reads the files one Debian package installs (plain or gzip/dictzip, never the
network) and yields documents: lists of sentences, one document per coherent unit of text (a
manual section, an info node, a man page section, a dictionary entry, a fortune, a Bible
chapter, a novel's chapter). Code, markup, tables, headings and navigation are dropped, and so
is every paragraph that does not read as English prose (`filters.is_prose`); a document needs
two sentences or more. Files are read in sorted order, so a corpus is a pure function of the
installed packages.

One module a format family (`html_pages`, `rst`, `pod`, `info`, `man`, `dictionaries`,
`fortunes`, `sword`, `novels`), the shared `documents` and `filters`, and the registry of
sources in `debian`.
"""

from albert_lab.corpora.prose.debian import COMBINED, NAMES, SOURCES, DebianSource, open_sources
from albert_lab.corpora.prose.documents import Document

__all__ = ["COMBINED", "NAMES", "SOURCES", "DebianSource", "Document", "open_sources"]
