"""Lines of a binary stream with a cap on what one line may hold in memory.

Iterating over a file reads each line whole, however long: a corpus line of 100 MB (a
minified file, a binary blob, a missing newline) costs 100 MB before any check sees it.
`bounded_lines` reads blocks and splits them; a line longer than its limit is never kept:
its length stands in for it, so the caller still knows where the next line starts.

`decoded_lines` is the form table readers take: numbered UTF-8 lines, a line over the limit
or not UTF-8 an error naming the file and line.

Example:
    offset = 0
    for line in bounded_lines(stream, limit=400_000):
        if isinstance(line, int):  # a line of `line` bytes, over the limit, not kept
            ...
        offset += line if isinstance(line, int) else len(line)
"""

from __future__ import annotations

import io
from typing import BinaryIO, Iterator, Type

BLOCK_BYTES = 1 << 20


def bounded_lines(stream: BinaryIO, limit: int,
                  block_bytes: int = BLOCK_BYTES) -> Iterator[bytes | int]:
    """The lines of `stream` from its current position, each with its `\\n` (the last one
    may have none), split at `\\n` only, as iterating over a binary file does. A line of
    more than `limit` bytes (newline included) comes as its length, an int, instead.

    Memory: at most `limit` bytes of a line plus one block of `block_bytes`."""
    kept: list[bytes] = []  # the start of the current line, while it is within the limit
    length = 0  # the current line's bytes so far
    while block := stream.read(block_bytes):
        lines = io.BytesIO(block).readlines()  # split in C, at "\n" only
        last = lines.pop() if not lines[-1].endswith(b"\n") else b""
        if lines:
            first = lines[0]
            length += len(first)
            lines[0] = length if length > limit else b"".join(kept) + first if kept else first
            kept, length = [], 0
            if max(map(len, lines[1:]), default=0) > limit:
                lines[1:] = [len(line) if len(line) > limit else line for line in lines[1:]]
            yield from lines
        length += len(last)
        if length > limit:
            kept = []
        elif last:
            kept.append(last)
    if length:
        yield length if length > limit else b"".join(kept)


def decoded_lines(stream: BinaryIO, path: str, limit: int,
                  error: Type[Exception]) -> Iterator[tuple[int, str]]:
    """(1-based line number, the line decoded as UTF-8 with its newline) of each line of
    `stream`. A line of more than `limit` bytes (never held whole) or one that is not UTF-8
    raises `error` naming `path` and the line."""
    for number, raw in enumerate(bounded_lines(stream, limit), start=1):
        if isinstance(raw, int):
            raise error(f"{path}:{number}: a line of {raw:,} bytes, more than the {limit:,} "
                        "a line may hold")
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as problem:
            raise error(f"{path}:{number}: not UTF-8 text (byte {problem.start + 1} of the "
                        "line)") from None
