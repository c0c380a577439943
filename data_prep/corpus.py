"""Input files -> shard-sized parts -> documents, streamed.

The inputs (plain or gzip text in the original format: one sentence per line, a blank line
between documents; and TFDS splits, see `tfds_source`) are laid end to end in one byte space,
which is cut into `num_shards` equal ranges. A part owns the documents whose first line starts
inside its range, so a reader seeks to the range start, skips the tail of a document begun
before it, and reads on past the range end to finish its last document (the way Hadoop splits
text). Parts depend only on the inputs and `num_shards`, never on the worker count, which is
what makes the output independent of how many processes build it. A gzip file cannot be
entered in the middle, so the part holding its first byte reads all of it.

Lines are read as bytes; a line with invalid UTF-8, a NUL byte or more than `max_line_chars`
characters is skipped and counted (or is an error under `strict`), reported as `path:line`.
"""

from __future__ import annotations

import bisect
import gzip
from typing import Iterator

from albert_tf.io import files
from albert_tf.text.normalize import normalize_text
from albert_tf.text.options import DataPrepError, DataPrepOptions
from albert_tf.text.statistics import InputReport
from data_prep.sources import Document, Part, PartPiece, Source, TextFile, TfdsSplit
from data_prep.tfds_source import read_tfds_documents


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
                found.append(TextFile(path, files.size(path)))
    return found


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
        report.note("empty_files", f"{path}: the file is empty")
        return
    lines = _LineChecker(path, options, report)
    for first_offset, raw_lines in _owned_documents(piece):
        sentences = lines.sentences_of(raw_lines)
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

    def sentences_of(self, raw_lines: list[tuple[int, bytes]]) -> list[str]:
        """The normalized, non-empty sentences of a document's raw lines.

        A document that is clean as a whole (valid UTF-8, no NUL, no line longer in bytes
        than max_line_chars) is decoded in one piece; otherwise line by line, to find and
        report the bad lines.
        """
        raws = [raw for _, raw in raw_lines]
        block = b"".join(raws)
        if max(map(len, raws)) <= self.options.max_line_chars and b"\x00" not in block:
            try:
                lines = block.decode("utf-8").split("\n")
            except UnicodeDecodeError:
                pass
            else:
                lower_case = self.options.lower_case
                texts = (normalize_text(line, lower_case) for line in lines)
                return [text for text in texts if text]
        texts = (self.text_of(raw, offset) for offset, raw in raw_lines)
        return [text for text in texts if text]

    def text_of(self, raw: bytes, offset: int) -> str | None:
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

    def _bad(self, kind: str, offset: int, what: str) -> None:
        if self.options.strict:
            raise DataPrepError(f"{self.path}:{self.line_number(offset)}: {what}; fix the "
                                "input or drop --strict to skip such lines")
        self.report.note(kind, lambda: f"{self.path}:{self.line_number(offset)}: {what}; "
                                       "line skipped")
        return None

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


def _owned_documents(piece: PartPiece) -> Iterator[tuple[int, list[tuple[int, bytes]]]]:
    """Yields (offset of first line, [(offset, raw line)]) for each document `piece` owns."""
    source = piece.source
    with files.open_read(source.path) as raw:
        if source.compressed:
            stream, offset, at_boundary = gzip.GzipFile(fileobj=raw), 0, True
            end = float("inf")
        else:
            stream, end = raw, piece.end
            offset, at_boundary = _seek_to_line_start(raw, piece.start)
        document: list[tuple[int, bytes]] = []
        skipping = not at_boundary  # inside a document that began before our range
        for line in stream:
            if not line.strip():
                if document:
                    yield document[0][0], document
                    document = []
                skipping = False
            elif document:
                document.append((offset, line))
            elif not skipping:
                if offset >= end:
                    return
                document.append((offset, line))
            offset += len(line)
        if document:
            yield document[0][0], document


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
