"""The texts of a task folder's training split as corpus documents (task-adaptive pretraining).

`albert-data corpus --task_text DIR` adds them to a corpus: the unlabelled text of the task a
model will be fine-tuned on, read before fine-tuning (Gururangan et al., 2020, "Don't Stop
Pretraining", call this task-adaptive pretraining). Only `train.tsv` is read, never its labels
and never the dev or test files, so every score measured on dev and test stays a score on text
the model has not seen. A folder made by `albert-data task` splits by group (a film, a product,
an article), so no dev or test example shares its group with a training one.

Each distinct text is one document, split into sentences: a pair task's two texts are two
documents, and a text that several examples share (a document of lee-pairs is in many pairs)
is taken once.
"""

from __future__ import annotations

import json
import os
from typing import Iterator

from albert_tf.io.lines import decoded_lines
from albert_tf.io.names import path_inside
from albert_tf.task_data.table_files import MAX_LINE_BYTES
from albert_tf.text.options import DataPrepError
from data_prep.sentences import split_sentences

TRAIN_SPLIT = "train"
HELD_OUT_SPLITS = ("dev", "test")
DESCRIPTION = "source.json"
SOURCE_PREFIX = "task-text:"  # a corpus source's name: task-text:<folder>
# The text columns of the layouts `albert-data task` writes (`glue_files`): SST-2's
# `sentence`, STS-B's `sentence1` and `sentence2`.
TEXT_COLUMNS = ("sentence", "sentence1", "sentence2")


def task_text_source(task_dir: str) -> tuple[str, dict, Iterator[list[str]]]:
    """The task folder's training texts as a corpus source, as `make_corpus` streams them:
    (`task-text:<folder>`, its provenance record, its documents)."""
    description, path = _description(task_dir)
    package = description.get("package") or {}
    origin = {"package": None,
              "version": f"{package.get('name', '?')} {package.get('version', '?')}",
              "licence": description.get("licence", "see the task folder's source.json"),
              "paths": [path],
              "description": f"the {TRAIN_SPLIT} split's texts of task "
                             f"{description['task']!r} (labels, dev and test not read)"}
    return (f"{SOURCE_PREFIX}{os.path.basename(os.path.normpath(task_dir))}", origin,
            _documents(path))


def task_text_documents(task_dir: str) -> Iterator[list[str]]:
    """One document per distinct text of the task folder's training split, in file order
    (an example's first text, then its second): the text's sentences; empty texts skipped."""
    return _documents(_description(task_dir)[1])


def _documents(path: str) -> Iterator[list[str]]:
    seen = set()
    for text in _texts(path):
        if text and text not in seen:
            seen.add(text)
            sentences = split_sentences(text)
            if sentences:
                yield sentences


def _texts(path: str) -> Iterator[str]:
    """The text fields of a task TSV, row by row (its fields hold no tab or line break); a
    line is read only up to `MAX_LINE_BYTES`, the limit of any table row."""
    try:
        with open(path, "rb") as file:
            lines = decoded_lines(file, path, MAX_LINE_BYTES, DataPrepError)
            header = next(lines, (1, ""))[1].rstrip("\n").split("\t")
            columns = [header.index(name) for name in TEXT_COLUMNS if name in header]
            if not columns:
                raise DataPrepError(f"{path}:1: no text column (expected one of "
                                    f"{', '.join(TEXT_COLUMNS)}), got {', '.join(header)}")
            for line_number, line in lines:
                fields = line.rstrip("\n").split("\t")
                if len(fields) != len(header):
                    raise DataPrepError(f"{path}:{line_number}: {len(fields)} fields, expected "
                                        f"{len(header)} ({', '.join(header)})")
                yield from (fields[column] for column in columns)
    except OSError as error:
        raise DataPrepError(f"{path}: cannot read the training split ({error})") from None


def _description(task_dir: str) -> tuple[dict, str]:
    """The folder's `source.json` and the path of its training split, which must be a file
    of the folder other than its dev and test files."""
    path = os.path.join(task_dir, DESCRIPTION)
    try:
        with open(path, encoding="utf-8") as file:
            description = json.load(file)
        description["task"]  # named in the provenance: missing is the error below, now
        names = dict(description["files"])
        train = names[TRAIN_SPLIT]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DataPrepError(f"{path}: not a task folder's description (`albert-data task` "
                            f"writes one; {type(error).__name__}: {error})") from None
    train_path = path_inside(task_dir, train, f"{path}: files.{TRAIN_SPLIT}", DataPrepError)
    # The folder's other files, and the names albert-finetune reads dev and test from.
    others = [(split, name) for split, name in names.items()
              if split != TRAIN_SPLIT and isinstance(name, str)]
    for split, name in [*others, *((split, f"{split}.tsv") for split in HELD_OUT_SPLITS)]:
        if _same_file(os.path.join(task_dir, name), train_path):
            raise DataPrepError(f"{path}: files.{TRAIN_SPLIT} names {train!r}, the folder's "
                                f"{split} file, not its training split (pretraining on dev or "
                                "test text would leak it into every score)")
    return description, train_path


def _same_file(first: str, second: str) -> bool:
    if os.path.exists(first) and os.path.exists(second):
        return os.path.samefile(first, second)
    return os.path.normpath(first) == os.path.normpath(second)
