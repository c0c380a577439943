"""lee-pairs: the similarity of two news documents (mean human rating 1-5), from gensim's test
data."""

from __future__ import annotations

import os
from typing import Iterator

from albert_lab.task_folders.examples import Example, clean_text, decode_text
from albert_tf.text.options import DataPrepError


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
