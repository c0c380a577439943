"""fine-foods: the sentiment of an Amazon food review (5 stars or not), from modeldata's R
lazy-load data (read by `albert_lab.corpora.rdata`, without R)."""

from __future__ import annotations

import html
import os
import re
from typing import Iterator

from albert_lab.corpora.rdata import data_frame_columns, read_lazy_load_database
from albert_lab.task_folders.examples import Example, clean_text
from albert_tf.text.options import DataPrepError

_TAG = re.compile(r"</?[A-Za-z][^<>]{0,300}>")
_LINE_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def strip_html(text: str) -> str:
    """Line breaks and tags of review HTML removed (links keep their words), entities
    decoded."""
    return html.unescape(_TAG.sub("", _LINE_BREAK.sub(" ", text)))


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
