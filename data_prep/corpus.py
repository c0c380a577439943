"""Input files -> shard-sized parts -> documents, streamed.

The inputs (plain or gzip text in the original format: one sentence per line, a blank line
between documents; and TFDS splits, see `tfds_source`) are laid end to end in one byte space,
which is cut into `num_shards` equal ranges. A part owns the documents whose first line starts
inside its range, so a reader seeks to the range start, skips the tail of a document begun
before it, and reads on past the range end to finish its last document (the way Hadoop splits
text). Parts depend only on the inputs and `num_shards`, never on the worker count, which is
what makes the output independent of how many processes build it. A gzip file cannot be
entered in the middle, so the part holding its first byte reads all of it; it is planned by
the size of its text (its gzip trailer's), and reading counts the text it decompresses
against that size: a file that holds more (a bomb with a false trailer, concatenated gzip
members, more than 4 GiB of text) is an error at the byte where it passes it.

Reading is bounded: lines are read as bytes, in blocks, and a line too long to hold
`max_line_chars` characters is never held whole; a line with invalid UTF-8, a NUL byte or
more than `max_line_chars` characters is skipped and counted (or is an error under `strict`),
reported as `path:line`. A document (the lines up to a blank one) of more than
MAX_DOCUMENT_BYTES is skipped the same way, so a file without blank lines costs no more
memory than a shard's share of the input.
"""

from __future__ import annotations

import bisect
import gzip
import itertools
import zlib
from typing import Iterator

from albert_tf.io import files
from albert_tf.io.lines import bounded_lines
from albert_tf.text.normalize import normalize_document, normalize_text
from albert_tf.text.options import DataPrepError, DataPrepOptions
from albert_tf.text.statistics import InputReport
from data_prep.sources import Document, Part, PartPiece, Source, TextFile, TfdsSplit
from data_prep.tfds_source import read_tfds_documents

# A document is at most this many bytes of text: a book is about 1 MB, a Wikipedia article
# at most about 1.5 MB. A longer one (a file without blank lines between its documents) is
# skipped; its examples would otherwise be held whole by one worker.
MAX_DOCUMENT_BYTES = 32 << 20
_GZIP_MAGIC = b"\x1f\x8b"


def expand_inputs(patterns: list[str]) -> list[TextFile]:
    """Files matched by `patterns` (paths or globs), in the order given, each pattern sorted.

    Raises DataPrepError naming a pattern that matches nothing, or a directory.
    """
    found, seen = [], set()
    for pattern in patterns:
        matches = files.glob(pattern) if files.has_magic(pattern) else [pattern]
        if not matches or not files.exists(matches[0]):
            raise DataPrepError(f"input {pattern!r}: no such file (or the glob matches nothing)")
        for path in matches:
            if files.isdir(path):
                raise DataPrepError(f"input {path!r} is a directory; pass files or a glob")
            if path not in seen:
                seen.add(path)
                found.append(TextFile(path, _text_size(path)))
    return found


def _text_size(path: str) -> int:
    """The bytes of text in `path`: its size, or for a .gz file the size its gzip trailer
    records (the text's length modulo 4 GiB; reading checks it)."""
    size = files.size(path)
    if not path.endswith(".gz") or size == 0:
        return size
    with files.open_read(path) as file:
        magic = file.read(2)
        if size < 18 or magic != _GZIP_MAGIC:
            raise DataPrepError(f"input {path}: not gzip data (a .gz file starts with bytes "
                                f"1f 8b and holds at least 18; it starts with {magic.hex()} "
                                f"and holds {size})")
        file.seek(size - 4)
        return int.from_bytes(file.read(4), "little")


def plan_parts(sources: list[Source], num_shards: int) -> list[Part]:
    """Cuts the sources' joint byte space into `num_shards` parts (see the module docstring)."""
    total = sum(source.size for source in sources)
    if total == 0:
        names = ", ".join(_source_name(source) for source in sources) or "(none)"
        raise DataPrepError(f"the inputs hold no text: {names} are empty")
    bounds = [shard * total // num_shards for shard in range(num_shards + 1)]
    pieces: list[list[PartPiece]] = [[] for _ in range(num_shards)]
    offset = 0
    for source in sources:
        first, last = offset, offset + source.size
        # A file read whole (gzip) or empty (reported as such) goes to the part holding its
        # first byte; an empty file at the very end to the last part.
        whole = source.size == 0 or (isinstance(source, TextFile) and source.compressed)
        owner = min(bisect.bisect_right(bounds, first) - 1, num_shards - 1)
        if whole:
            pieces[owner].append(PartPiece(source, 0, source.size))
        else:
            # Only the parts whose ranges meet [first, last): thousands of files and shards
            # plan in milliseconds.
            for shard in range(owner, bisect.bisect_left(bounds, last)):
                low, high = max(bounds[shard], first), min(bounds[shard + 1], last)
                if low < high:
                    pieces[shard].append(_piece(source, low - first, high - first))
        offset = last
    return [Part(shard, tuple(shard_pieces)) for shard, shard_pieces in enumerate(pieces)]


def _piece(source: Source, start: int, end: int) -> PartPiece:
    if isinstance(source, TfdsSplit):
        # Record r "starts" at byte r * size / num_records; own the records starting in range.
        def first_record(offset):
            return -(-offset * source.num_records // source.size)
        return PartPiece(source, first_record(start), first_record(end))
    return PartPiece(source, start, end)


def _source_name(source: Source) -> str:
    return source.path if isinstance(source, TextFile) else f"tfds:{source.name}/{source.split}"


def read_documents(part: Part, options: DataPrepOptions,
                   report: InputReport) -> Iterator[Document]:
    """Yields the documents `part` owns, with normalized, non-empty sentences."""
    for piece in part.pieces:
        if isinstance(piece.source, TfdsSplit):
            yield from read_tfds_documents(piece, options, report)
        else:
            yield from _read_file_documents(piece, options, report)


def _read_file_documents(piece, options, report) -> Iterator[Document]:
    path = piece.source.path
    if piece.source.size == 0:
        if piece.source.compressed:  # or holds a multiple of 4 GiB: reading refuses that
            with files.open_read(path) as raw:
                _CountedGzip(raw, piece.source).read(1)
        report.note("empty_files", f"{path}: the file is empty")
        return
    lines = _LineChecker(path, options, report)
    for first_offset, raw_lines in _owned_documents(piece, lines):
        sentences = lines.sentences_of(first_offset, raw_lines)
        if len(sentences) == 1:
            report.note("single_sentence_documents", lambda: (
                f"{path}:{lines.line_number(first_offset)}: a document of one sentence "
                "(its examples split that sentence into segments A and B)"))
        if sentences:
            yield Document(sentences, path)


class _LineChecker:
    """Decodes and normalizes lines; reports bad ones by `path:line` (line found lazily)."""

    def __init__(self, path, options, report):
        self.path, self.options, self.report = path, options, report

    @property
    def limit(self) -> int:
        """Bytes a line may have and still hold at most max_line_chars characters (UTF-8
        takes at most 4 bytes a character; the line ending 2): longer lines are not read."""
        return 4 * self.options.max_line_chars + 2

    def sentences_of(self, first_offset: int, raw_lines: list[bytes | int]) -> list[str]:
        """The normalized, non-empty sentences of a document's raw lines, the first at byte
        `first_offset` (a line over `limit` bytes comes as its length).

        A document that is clean as a whole (valid UTF-8, no NUL, no line longer in bytes
        than max_line_chars) is normalized in one piece; otherwise line by line, to find and
        report the bad lines.
        """
        try:
            block = b"".join(raw_lines)
        except TypeError:  # an over-long line, given as its length
            block = None
        if (block is not None and b"\x00" not in block
                and (len(block) <= self.options.max_line_chars
                     or max(map(len, raw_lines)) <= self.options.max_line_chars)):
            try:
                return normalize_document(block, self.options.lower_case)
            except UnicodeDecodeError:
                pass
        offsets = itertools.accumulate((raw if isinstance(raw, int) else len(raw)
                                        for raw in raw_lines), initial=first_offset)
        texts = (self.text_of(raw, offset) for offset, raw in zip(offsets, raw_lines))
        return [text for text in texts if text]

    def text_of(self, raw: bytes | int, offset: int) -> str | None:
        if isinstance(raw, int):
            return self._bad("overlong_lines", offset,
                             f"line of {raw:,} bytes, more than max_line_chars="
                             f"{self.options.max_line_chars:,} characters (not a sentence; "
                             "not read)")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            return self._bad("invalid_utf8_lines", offset,
                             f"invalid UTF-8 at byte {error.start} of the line")
        if "\x00" in text:
            return self._bad("nul_byte_lines", offset, "NUL byte in the line (binary input?)")
        text = text.rstrip("\r\n")
        if len(text) > self.options.max_line_chars:
            return self._bad("overlong_lines", offset,
                             f"line of {len(text):,} characters, more than max_line_chars="
                             f"{self.options.max_line_chars:,} (not a sentence)")
        return normalize_text(text, self.options.lower_case)

    def _bad(self, kind: str, offset: int, what: str, unit: str = "line") -> None:
        if self.options.strict:
            raise DataPrepError(f"{self.path}:{self.line_number(offset)}: {what}; fix the "
                                f"input or drop --strict to skip such {unit}s")
        self.report.note(kind, lambda: f"{self.path}:{self.line_number(offset)}: {what}; "
                                       f"{unit} skipped")
        return None

    def overlong_document(self, offset: int) -> None:
        self._bad("overlong_documents", offset,
                  f"a document of more than {MAX_DOCUMENT_BYTES:,} bytes (no blank line "
                  "between documents?)", unit="document")

    def line_number(self, offset: int) -> int:
        """1-based number of the line starting at byte `offset`.

        It counts the newlines before `offset`, a pass over the file, so reports ask for it
        only for the few messages they keep.
        """
        with files.open_read(self.path) as raw:
            stream = gzip.GzipFile(fileobj=raw) if self.path.endswith(".gz") else raw
            count, remaining = 0, offset
            while remaining > 0:
                block = stream.read(min(remaining, 1 << 20))
                if not block:
                    break
                count += block.count(b"\n")
                remaining -= len(block)
        return count + 1


def _owned_documents(piece: PartPiece, lines: _LineChecker
                     ) -> Iterator[tuple[int, list[bytes | int]]]:
    """Yields (offset of first line, its raw lines) for each document `piece` owns; an
    over-long line comes as its length, an over-long document is reported and skipped."""
    source = piece.source
    with files.open_read(source.path) as raw:
        if source.compressed:
            stream, end = _CountedGzip(raw, source), float("inf")
            offset, at_boundary = 0, True
        else:
            stream, end = raw, piece.end
            offset, at_boundary = _seek_to_line_start(raw, piece.start)
        document: list[bytes | int] = []
        first = document_bytes = 0
        skipping = not at_boundary  # inside a document that began before our range
        for line in bounded_lines(stream, lines.limit):
            if line.__class__ is int:  # a line over the limit, given as its length: not held
                size = held = line
                held = 0
            else:
                size = held = len(line)
                if line.isspace():  # a blank line (bytes.strip()'s whitespace only)
                    if document:
                        yield first, document
                        document, document_bytes = [], 0
                    skipping = False
                    offset += size
                    continue
            if skipping or (not document and offset >= end):
                if offset >= end:
                    return  # documents starting from here on belong to later parts
            elif document_bytes + held > MAX_DOCUMENT_BYTES:
                lines.overlong_document(first if document else offset)
                document, document_bytes, skipping = [], 0, True
            else:
                if not document:
                    first = offset
                document.append(line)
                document_bytes += held
            offset += size
        if document:
            yield first, document


class _CountedGzip:
    """A gzip file's text, read no further than the size its plan recorded (see the
    module docstring); a corrupt file is an error naming it, not a zlib exception."""

    def __init__(self, raw, source: TextFile):
        self.stream, self.path, self.planned = gzip.GzipFile(fileobj=raw), source.path, source.size
        self.read_bytes = 0

    def read(self, size: int) -> bytes:
        try:
            data = self.stream.read(min(size, self.planned + 1 - self.read_bytes))
        except (OSError, EOFError, zlib.error) as error:
            raise DataPrepError(f"{self.path}: corrupt gzip data after {self.read_bytes:,} "
                                f"bytes of text ({error})") from None
        self.read_bytes += len(data)
        if self.read_bytes > self.planned:
            raise DataPrepError(
                f"{self.path}: holds more than the {self.planned:,} bytes of text its gzip "
                "trailer records, the size the build was planned with (a gzip bomb, gzip "
                "members joined together, or more than 4 GiB of text); decompress it, or "
                "split it into smaller .gz files")
        return data


def _seek_to_line_start(raw, start: int) -> tuple[int, bool]:
    """Positions `raw` at the first line starting at or after `start`.

    Returns that offset and whether a document boundary (file start or blank line) lies just
    before it.
    """
    if start == 0:
        raw.seek(0)
        return 0, True
    raw.seek(start - 1)
    tail = raw.readline()
    position = start - 1 + len(tail)
    blank = not tail.strip() and _blank_back_to_line_start(raw, start - 1)
    raw.seek(position)
    return position, blank


def _blank_back_to_line_start(raw, position: int) -> bool:
    """True if bytes from the previous newline (or file start) up to `position` are blank."""
    while position > 0:
        low = max(0, position - 4096)
        raw.seek(low)
        block = raw.read(position - low)
        for byte in reversed(block):
            if byte == 0x0A:
                return True
            if byte not in b" \t\r\x0b\x0c":
                return False
        position = low
    return True
