"""A task's files in the layout of a GLUE task (SST-2's or STS-B's columns), the test labels
apart, and `groups.tsv` (which item went to which split)."""

from __future__ import annotations

import collections
from typing import Iterable, Sequence

from albert_lab.task_folders.examples import Example
from albert_lab.task_folders.splitting import SPLITS
from albert_lab.task_folders.task_source import TaskSource

_STSB_COLUMNS = ["index", "genre", "filename", "year", "old_index", "source1", "source2",
                 "sentence1", "sentence2"]
TEST_LABELS_FILE = "test_labels.tsv"


def _tsv(rows: Iterable[Sequence]) -> bytes:
    """Rows as UTF-8 tab-separated lines; a field holding a tab or line break is an error."""
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


def groups_file(assignment: dict[str, str], splits: dict[str, list[Example]]) -> bytes:
    """`groups.tsv`: split, group and its examples, by split in SPLITS order, then group."""
    counts = collections.Counter(group for split in SPLITS for example in splits[split]
                                 for group in set(example.groups))
    order = {split: position for position, split in enumerate(SPLITS)}
    rows = sorted(assignment.items(), key=lambda item: (order[item[1]], item[0]))
    return _tsv([("split", "group", "examples")]
                + [(split, group, counts[group]) for group, split in rows])
