"""TFRecord files without TensorFlow: framing, CRC32C, atomic shard writing, and reading.

A TFRecord is, per record: length (uint64 little-endian), masked CRC32C of those 8 bytes
(uint32), the data, masked CRC32C of the data. `google-crc32c` computes CRC32C in C, so the
data-prep workers need no TensorFlow. `read_records` checks both CRCs, so a corrupt file is an
error that names it, not silently short data.
"""

from __future__ import annotations

import functools
import hashlib
import struct
from typing import Iterable, Iterator

import google_crc32c

from albert_tf.io.files import atomic_output, open_read
from albert_tf.text.options import DataPrepError

_MASK_DELTA = 0xA282EAD8


def masked_crc32c(data: bytes) -> int:
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


@functools.lru_cache(maxsize=4096)
def _header(length: int) -> bytes:
    """Length and its masked CRC; records of one shard have few distinct lengths."""
    packed = struct.pack("<Q", length)
    return packed + struct.pack("<I", masked_crc32c(packed))


def frame(record: bytes) -> bytes:
    """One record with its TFRecord header and footer."""
    return b"".join((_header(len(record)), record, struct.pack("<I", masked_crc32c(record))))


def write_records(path: str, records: Iterable[bytes]) -> tuple[int, str]:
    """Writes `records` to `path` atomically; returns their count and the file's SHA-256."""
    count, digest = 0, hashlib.sha256()
    with atomic_output(path) as file:
        for record in records:
            framed = frame(record)
            file.write(framed)
            digest.update(framed)
            count += 1
    return count, "sha256:" + digest.hexdigest()


def read_records(path: str) -> Iterator[bytes]:
    """Yields the records of a TFRecord file, checking lengths and CRCs."""
    with open_read(path) as file:
        index = 0
        while header := file.read(12):
            if len(header) < 12:
                raise DataPrepError(f"{path}: truncated TFRecord header at record {index}")
            length_bytes, length_crc = header[:8], struct.unpack("<I", header[8:])[0]
            if masked_crc32c(length_bytes) != length_crc:
                raise DataPrepError(f"{path}: corrupt length of record {index} (CRC mismatch)")
            (length,) = struct.unpack("<Q", length_bytes)
            data, footer = file.read(length), file.read(4)
            if len(data) < length or len(footer) < 4:
                raise DataPrepError(f"{path}: record {index} is truncated")
            if masked_crc32c(data) != struct.unpack("<I", footer)[0]:
                raise DataPrepError(f"{path}: corrupt data in record {index} (CRC mismatch)")
            yield data
            index += 1
