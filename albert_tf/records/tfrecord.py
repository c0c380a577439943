"""TFRecord files without TensorFlow: framing, CRC32C, atomic shard writing, and reading.

A TFRecord is, per record: length (uint64 little-endian), masked CRC32C of those 8 bytes
(uint32), the data, masked CRC32C of the data. `google-crc32c` computes CRC32C in C, so the
data-prep workers need no TensorFlow. `read_records` checks both CRCs, so a corrupt file is an
error that names it, not silently short data.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Iterable, Iterator

import google_crc32c

from albert_tf.io.files import atomic_output, open_read, size
from albert_tf.text.options import DataPrepError

_MASK_DELTA = 0xA282EAD8


def masked_crc32c(data: bytes) -> int:
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def _header(length: int) -> bytes:
    """Length and its masked CRC (`framed_blocks` keeps those of the lengths it meets:
    records of one shard have few distinct lengths)."""
    packed = struct.pack("<Q", length)
    return packed + struct.pack("<I", masked_crc32c(packed))


def frame(record: bytes) -> bytes:
    """One record with its TFRecord header and footer."""
    return next(framed_blocks([record]))[0]


def framed_blocks(records: Iterable[bytes], block_records: int = 1024
                  ) -> Iterator[tuple[bytes, int]]:
    """`records` with their TFRecord headers and footers, `block_records` of them joined into
    each block (a file write and a hash update a block, not a record); yields each block and
    its record count."""
    crc32c, headers, parts = google_crc32c.value, {}, []
    for record in records:
        header = headers.get(len(record))
        if header is None:
            header = headers[len(record)] = _header(len(record))
        crc = crc32c(record)  # masked as `masked_crc32c` does, without the call
        masked = (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF
        parts += (header, record, masked.to_bytes(4, "little"))
        if len(parts) >= 3 * block_records:
            yield b"".join(parts), block_records
            parts = []
    if parts:
        yield b"".join(parts), len(parts) // 3


def write_records(path: str, records: Iterable[bytes]) -> tuple[int, str]:
    """Writes `records` to `path` atomically; returns their count and the file's SHA-256."""
    count, digest = 0, hashlib.sha256()
    with atomic_output(path) as file:
        for block, records_in_block in framed_blocks(records):
            file.write(block)
            digest.update(block)
            count += records_in_block
    return count, "sha256:" + digest.hexdigest()


def read_records(path: str) -> Iterator[bytes]:
    """Yields the records of a TFRecord file, checking lengths and CRCs.

    A length is checked against the bytes left in the file before anything is read, so a
    corrupt header (a length of 2**60) is an error naming the record and byte, not an
    allocation the file cannot back."""
    total = size(path)
    with open_read(path) as file:
        index, position = 0, 0
        while header := file.read(12):
            where = f"{path}: record {index} (at byte {position:,})"
            length = _record_length(header, where, total - position)
            data, footer = file.read(length), file.read(4)
            if len(data) < length or len(footer) < 4:
                raise DataPrepError(f"{where}: truncated (the file shrank while read)")
            if masked_crc32c(data) != struct.unpack("<I", footer)[0]:
                raise DataPrepError(f"{where}: corrupt data (CRC mismatch)")
            yield data
            index, position = index + 1, position + 16 + length


def count_records(path: str) -> int:
    """The number of records in a TFRecord file, from its headers alone (each length and
    its CRC checked, the data skipped): what a reader checks a manifest's count against
    without reading the shard."""
    total = size(path)
    with open_read(path) as file:
        index, position = 0, 0
        while position < total:
            file.seek(position)
            where = f"{path}: record {index} (at byte {position:,})"
            position += 16 + _record_length(file.read(12), where, total - position)
            index += 1
    return index


def digest_records(path: str, block_bytes: int = 1 << 20) -> tuple[int, str]:
    """(records, `sha256:<hex>` of the bytes) of a TFRecord file in one streaming pass: the
    checksum `write_records` returned, and the count from the record headers (each length
    and its CRC checked) as they stream by."""
    total, digest = size(path), hashlib.sha256()
    count, header_at, position, pending = 0, 0, 0, b""
    with open_read(path) as file:
        while block := file.read(block_bytes):
            digest.update(block)
            buffer, start = pending + block, position - len(pending)
            position += len(block)
            while header_at + 12 <= position:
                offset = header_at - start
                where = f"{path}: record {count} (at byte {header_at:,})"
                header_at += 16 + _record_length(buffer[offset:offset + 12], where,
                                                 total - header_at)
                count += 1
            pending = buffer[header_at - start:] if header_at < position else b""
    if header_at < position:  # a header cut short at the end
        _record_length(pending, f"{path}: record {count} (at byte {header_at:,})",
                       total - header_at)
    return count, "sha256:" + digest.hexdigest()


def _record_length(header: bytes, where: str, left: int) -> int:
    """The data length a record's 12-byte header gives, checked against its CRC and against
    the `left` bytes from the header's start to the end of the file."""
    if len(header) < 12:
        raise DataPrepError(f"{where}: truncated TFRecord header")
    length_bytes, length_crc = header[:8], struct.unpack("<I", header[8:])[0]
    if masked_crc32c(length_bytes) != length_crc:
        raise DataPrepError(f"{where}: corrupt length (CRC mismatch)")
    (length,) = struct.unpack("<Q", length_bytes)
    if 16 + length > left:
        raise DataPrepError(f"{where}: a length of {length:,} bytes, but only "
                            f"{max(left - 16, 0):,} are left in the file (truncated or "
                            "corrupt)")
    return length
