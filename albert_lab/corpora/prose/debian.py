"""The registry of Debian prose sources and opening them for a corpus.

`SOURCES`: per source name, the package that provides it, the files read (glob patterns under
`ROOT`), its licence (from /usr/share/doc/<package>/copyright) and its reader.
`open_sources("debian-prose")` reads every installed source it combines (all but the King James
Bible, which repeats the World English Bible); a source whose package is missing
raises a `DataPrepError` naming the package to install.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import glob
import os
from typing import Iterator

from albert_lab.corpora.debian_packages import installed_version
from albert_lab.corpora.prose.dictionaries import (
    devil_paragraphs,
    dictd_reader,
    foldoc_paragraphs,
    gcide_paragraphs,
    jargon_paragraphs,
)
from albert_lab.corpora.prose.documents import Document, Reader
from albert_lab.corpora.prose.filters import without_repeats
from albert_lab.corpora.prose.fortunes import fortune_documents
from albert_lab.corpora.prose.html_pages import html_documents
from albert_lab.corpora.prose.info import info_documents
from albert_lab.corpora.prose.man import linux_man_page_documents
from albert_lab.corpora.prose.novels import r_novel_documents
from albert_lab.corpora.prose.pod import pod_documents
from albert_lab.corpora.prose.rst import rst_documents_of, rst_prose_documents_of
from albert_lab.corpora.prose.sword import sword_documents
from albert_tf.text.options import DataPrepError

ROOT = "/"  # the registry's paths are read under this folder (the tests point it elsewhere)
COMBINED = "debian-prose"


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
    combined: bool = True  # read by `debian-prose` (False: only by its own name)

    def files(self) -> list[str]:
        """The files it reads, in sorted order (a file linked twice once)."""
        found: dict[str, str] = {}
        for pattern in self.paths:
            for path in glob.glob(os.path.join(ROOT, pattern.lstrip("/")), recursive=True):
                name = os.path.basename(path)
                if os.path.isfile(path) and not any(fnmatch.fnmatch(name, skipped)
                                                    for skipped in self.skip):
                    found.setdefault(os.path.realpath(path), path)  # a file once, links aside
        return sorted(found.values())

    def missing_message(self) -> str:
        """The error when its package is not installed, with the command that installs it."""
        return (f"corpus source {self.name!r} reads Debian's {self.package} package, which is "
                f"not installed (nothing matches {', '.join(self.paths)}): install it with "
                f"`apt-get install {self.package}`")

    def documents(self) -> Iterator[Document]:
        """Its documents, file by file in sorted order; an error at once if nothing is there."""
        files = self.files()
        if not files:
            raise DataPrepError(self.missing_message())
        documents = (document for path in files for document in self.reader(path))
        return without_repeats(documents) if self.drop_repeats else documents


def _source(name, package, paths, licence, reader, skip=(), description="", drop_repeats=True,
            combined=True):
    """A `DebianSource`, given one path pattern or several."""
    paths = (paths,) if isinstance(paths, str) else tuple(paths)
    return DebianSource(name, package, paths, licence, reader, tuple(skip), description,
                        drop_repeats, combined)


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
            dictd_reader(gcide_paragraphs),
            "The Collaborative International Dictionary of English (Webster's 1913 + WordNet)"),
    _source("jargon", "dict-jargon", "/usr/share/dictd/jargon.index", "public domain",
            dictd_reader(jargon_paragraphs), "The Jargon File"),
    _source("foldoc", "dict-foldoc", "/usr/share/dictd/foldoc.index",
            "GFDL-1.1+ (no invariant sections, no cover texts)", dictd_reader(foldoc_paragraphs),
            "The Free On-line Dictionary of Computing"),
    _source("devils-dictionary", "dict-devil", "/usr/share/dictd/devil.index", "public domain",
            dictd_reader(devil_paragraphs), "Ambrose Bierce, The Devil's Dictionary"),
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
    # The same book as the World English Bible in older English: a source of its own (the
    # data-prep benchmark's second corpus), left out of debian-prose so no book is read twice.
    _source("king-james-bible", "sword-text-kjv",
            "/usr/share/sword/modules/texts/ztext/engKJV2006eb/*.bzs",
            "public domain (outside the UK, where the Crown's letters patent apply)",
            sword_documents, (), "The King James Version (SWORD module)", combined=False),
    _source("jane-austen", "r-cran-janeaustenr",
            "/usr/lib/R/site-library/janeaustenr/data/Rdata.rdx",
            "public domain (novels of 1811-1818); package MIT", r_novel_documents, (),
            "Jane Austen's six novels"),
]}
NAMES = (*SOURCES, COMBINED)


def origin(source: DebianSource) -> dict:
    """What the provenance record says about where a source's text came from (the version
    "unknown" without dpkg-query or the package)."""
    return {"package": source.package,
            "version": installed_version(source.package) or "unknown",
            "licence": source.licence, "paths": list(source.paths),
            "description": source.description}


def open_sources(name: str) -> tuple[list[tuple[str, dict, Iterator[Document]]], dict[str, str]]:
    """([(source, origin, documents)], {missing source: the command that installs it}).

    A single source that is not installed is an error; `debian-prose` reads every installed
    source and is an error only when none is.
    """
    if name not in NAMES:
        raise DataPrepError(f"unknown Debian corpus source {name!r} (known: {', '.join(NAMES)})")
    wanted = ([source for source in SOURCES.values() if source.combined] if name == COMBINED
              else [SOURCES[name]])
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
