"""What data prep reads: text files and TFDS splits, the parts of them one shard owns, and
the documents read from them (plain data, shared by the corpus planner and the readers)."""

from __future__ import annotations

import dataclasses
from typing import Union


@dataclasses.dataclass(frozen=True)
class TextFile:
    """A text input: `size` is its byte size on disk (compressed size for .gz)."""

    path: str
    size: int

    @property
    def compressed(self) -> bool:
        return self.path.endswith(".gz")


@dataclasses.dataclass(frozen=True)
class TfdsSplit:
    """A TFDS split read as documents: `size` is its byte size as TFDS records it."""

    name: str
    split: str
    text_field: str
    data_dir: str | None
    num_records: int
    size: int


Source = Union[TextFile, TfdsSplit]


@dataclasses.dataclass(frozen=True)
class PartPiece:
    """The slice of one source a part owns: bytes [start, end) of a file, records of a split."""

    source: Source
    start: int
    end: int


@dataclasses.dataclass(frozen=True)
class Part:
    index: int
    pieces: tuple[PartPiece, ...]


@dataclasses.dataclass
class Document:
    """A document's normalized sentences and the input it came from."""

    sentences: list[str]
    source: str
