"""English corpora made from text already on the machine, in the original input format.

- `python-docs`: the reStructuredText sources of the Python documentation, as Debian's
  `python3.11-doc` package installs them (`apt-get install python3.11-doc`, about 12 MB under
  /usr/share/doc/python3.11/html/_sources). Each section is a document; markup, code samples,
  tables and headings are dropped, paragraphs split into sentences (`albert_lab.corpora.prose.rst`).
- `stdlib-docstrings`: the docstrings of the standard library that ships with every Python
  install (a few MB): one document per module, class or function docstring of two or more
  sentences.
- the Debian sources of `albert_lab.corpora.prose` (manuals, dictionaries, man pages, a Bible,
  novels; `debian-prose` reads every one that is installed).

All are deterministic (files in sorted order) and written atomically, and every corpus gets a
provenance record beside it, `<corpus>.sources.json`: per source, the package and its installed
version, the licence, and the documents, sentences, words and bytes written.
"""

from __future__ import annotations

import ast
import glob
import json
import os
import platform
import sysconfig
from typing import Iterable, Iterator, Sequence

from albert_lab.corpora.prose import NAMES, open_sources
from albert_lab.corpora.task_text import task_text_source
from albert_tf.io.files import atomic_write_bytes
from albert_tf.text.options import DataPrepError
from data_prep.sentences import split_sentences

# `none`: no source of its own, only the task texts (`--task_text`).
NO_SOURCE = "none"
SOURCES = ("python-docs", "stdlib-docstrings",
           *(name for name in NAMES if name != "python-docs"), NO_SOURCE)
COUNTS = ("documents", "sentences", "words", "bytes")


def stdlib_docstring_documents() -> Iterator[list[str]]:
    """The docstrings of this Python's standard library (tests left out), in sorted file order:
    a document per module, class or function docstring of two sentences or more."""
    root = sysconfig.get_paths()["stdlib"]
    skipped = {"test", "tests", "idle_test", "site-packages", "dist-packages"}
    paths = sorted(path for path in glob.glob(os.path.join(root, "**", "*.py"), recursive=True)
                   if not skipped & set(os.path.relpath(path, root).split(os.sep)))
    for path in paths:
        try:
            with open(path, encoding="utf-8") as file:
                tree = ast.parse(file.read())
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)):
                docstring = ast.get_docstring(node)
                sentences = _docstring_sentences(docstring) if docstring else []
                if len(sentences) > 1:
                    yield sentences


def _docstring_sentences(docstring: str) -> list[str]:
    prose = [line.strip() for line in docstring.splitlines()
             if not line.startswith((" ", "\t")) and not line.lstrip().startswith((">>>", "..."))]
    return [sentence for paragraph in " ".join(prose or [""]).split("  ")
            for sentence in split_sentences(paragraph)]


def _document_block(document: list[str]) -> str:
    return "\n".join(document) + "\n\n"


def write_corpus(documents: Iterable[list[str]], path: str, max_bytes: int | None = None,
                 heldout_path: str | None = None, heldout_every: int = 0) -> dict:
    """Writes documents in the original format (sentence per line, blank line between).

    With `heldout_path` and `heldout_every` = n, every n-th document goes to `heldout_path`
    instead (a held-out set of whole documents, for evaluation); `max_bytes` counts both.
    """
    if heldout_path and heldout_every < 2:
        raise DataPrepError(f"--heldout_every must be 2 or more, got {heldout_every}")
    kept: dict[bool, list[str]] = {False: [], True: []}
    size, count = 0, 0
    for document in documents:
        block = _document_block(document)
        count += 1
        kept[bool(heldout_path) and count % heldout_every == 0].append(block)
        size += len(block.encode())
        if max_bytes and size >= max_bytes:
            break
    if not kept[False] or (heldout_path and not kept[True]):
        raise DataPrepError(f"the corpus source gave too few documents ({count})")
    atomic_write_bytes(path, "".join(kept[False]).encode())
    written = {"path": path, "documents": len(kept[False]), "bytes": size}
    if heldout_path:
        atomic_write_bytes(heldout_path, "".join(kept[True]).encode())
        written |= {"heldout_path": heldout_path, "heldout_documents": len(kept[True])}
    return written


def make_corpus(source: str, path: str, max_bytes: int | None = None,
                heldout_path: str | None = None, heldout_every: int = 0,
                task_dirs: Sequence[str] = ()) -> dict:
    """Writes the corpus of `source` to `path` (see `write_corpus`) and its provenance record
    to `<path>.sources.json`; returns what `write_corpus` does plus the counts per source.

    A combined source (`debian-prose`) takes one document from each of its sources in turn, so
    any prefix of the corpus (`max_bytes`) mixes them all; so do `task_dirs`, the task folders
    whose training texts join the corpus (`albert_lab.corpora.task_text`; source name
    `task-text:<task>`). The counts include the held-out documents.
    """
    if source == NO_SOURCE and not task_dirs:
        raise DataPrepError(f"corpus source {NO_SOURCE!r} needs one or more task folders "
                            f"(--task_text)")
    streams, missing = ([], {}) if source == NO_SOURCE else _open_source(source)
    task_streams = [task_text_source(task_dir) for task_dir in task_dirs]
    streams += task_streams
    counts = {name: origin | dict.fromkeys(COUNTS, 0) for name, origin, _ in streams}
    documents = interleave([_counted(documents, counts[name]) for name, _, documents in streams])
    written = write_corpus(documents, path, max_bytes, heldout_path, heldout_every)
    totals = {key: sum(count[key] for count in counts.values()) for key in COUNTS}
    provenance_path = path + ".sources.json"
    record = {"source": source, "task_text": list(task_dirs), "corpus": path,
              "heldout": heldout_path,
              "heldout_every": heldout_every if heldout_path else None, "max_bytes": max_bytes,
              "counts_include_heldout": bool(heldout_path), "total": totals, "sources": counts,
              "not_installed": missing}
    atomic_write_bytes(provenance_path,
                       (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode())
    label = " + ".join([*([] if source == NO_SOURCE else [source]),
                        *(name for name, _, _ in task_streams)])
    return written | {"source": _summary(label, counts, totals, missing, provenance_path),
                      "sources": counts, "sentences": totals["sentences"],
                      "words": totals["words"], "not_installed": missing,
                      "provenance_path": provenance_path}


def _open_source(source: str) -> tuple[list[tuple[str, dict, Iterator[list[str]]]], dict]:
    """([(name, origin, documents)], {source not installed: how to install it})."""
    if source == "stdlib-docstrings":
        origin = {"package": None, "version": f"Python {platform.python_version()}",
                  "licence": "PSF-2.0", "paths": [sysconfig.get_paths()["stdlib"]],
                  "description": "docstrings of this Python's standard library"}
        return [(source, origin, stdlib_docstring_documents())], {}
    if source not in SOURCES:
        raise DataPrepError(f"unknown corpus source {source!r} (known: {', '.join(SOURCES)})")
    return open_sources(source)


def _counted(documents: Iterable[list[str]], counts: dict) -> Iterator[list[str]]:
    for document in documents:
        counts["documents"] += 1
        counts["sentences"] += len(document)
        counts["words"] += sum(len(sentence.split()) for sentence in document)
        counts["bytes"] += len(_document_block(document).encode())
        yield document


def interleave(streams: list[Iterator[list[str]]]) -> Iterator[list[str]]:
    """One document from each stream in turn, until all are exhausted.

    >>> list(interleave([iter("ab"), iter("xyz")]))
    ['a', 'x', 'b', 'y', 'z']
    """
    active = list(streams)
    while active:
        for stream in list(active):
            document = next(stream, None)
            if document is None:
                active.remove(stream)
            else:
                yield document


def _summary(source: str, counts: dict, totals: dict, missing: dict, provenance: str) -> str:
    """What the CLI prints after "from": the source, its package(s) and the counts."""
    if len(counts) == 1:
        ((name, origin),) = counts.items()
        package = (f"Debian package {origin['package']} {origin['version']}"
                   if origin["package"] else origin["version"])
        what = f"{name} ({package}, {origin['licence']}"
    else:
        what = f"{source} ({len(counts)} sources"
        if missing:
            what += f"; not installed: {', '.join(missing)}"
    return (f"{what}; {totals['sentences']:,} sentences, {totals['words']:,} words; "
            f"provenance and counts per source in {provenance})")
