"""R's lazy-load databases, read without R: what `R CMD INSTALL` makes of a package's data/,
`<base>.rdx` (an index: a serialized list of variables -> (offset, length) in the .rdb) and
`<base>.rdb` (each object serialized in R's XDR format and compressed).

Both the fine-foods task (modeldata's tibbles) and the jane-austen prose source
(janeaustenr's character vectors) read their package's data through this module.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import lzma
import os
import struct
import zlib
from typing import Optional, Sequence

from albert_tf.text.options import DataPrepError

# R's type codes (SEXPTYPE) of what is read here
R_NIL, R_REF, R_SYMBOL, R_PAIRLIST, R_CHAR = 254, 255, 1, 2, 9
R_LOGICAL, R_INTEGER, R_REAL, R_STRING, R_LIST = 10, 13, 14, 16, 19
_R_NA_INTEGER = -2**31
_R_IS_LATIN1 = 1 << 2
# R's xz compression: raw LZMA2 at preset 9 with "extreme" (src/main/serialize.c).
R_XZ_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME}]


@dataclasses.dataclass
class RObject:
    """A decoded R vector: its R type code, its values and its attributes."""

    type: int
    values: list
    attributes: dict


class _RUnserializer:
    """The subset of R's binary (XDR) serialization that data tables use: vectors of
    logicals, integers, doubles, strings and lists, with attributes (names, class, levels,
    row.names). Other objects (functions, environments, ALTREP) raise DataPrepError."""

    def __init__(self, data: bytes, where: str):
        self.data, self.position, self.where, self.symbols = data, 0, where, []

    def _take(self, size: int) -> bytes:
        if self.position + size > len(self.data):
            raise DataPrepError(f"{self.where}: R serialization ends early")
        chunk = self.data[self.position:self.position + size]
        self.position += size
        return chunk

    def _int(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def read(self):
        if self._take(2) != b"X\n":
            raise DataPrepError(f"{self.where}: not R's binary (XDR) serialization")
        version = self._int()
        self._int(), self._int()  # the writer's R version, the oldest that reads it
        if version == 3:
            self._take(self._int())  # the native encoding's name
        elif version != 2:
            raise DataPrepError(f"{self.where}: R serialization version {version}")
        return self._item()

    def _item(self):
        flags = self._int()
        kind, levels = flags & 0xFF, flags >> 12
        has_attributes, has_tag = flags & (1 << 9), flags & (1 << 10)
        if kind == R_NIL:
            return None
        if kind == R_REF:
            index = (flags >> 8) or self._int()
            return self.symbols[index - 1]
        if kind == R_SYMBOL:
            symbol = self._item()
            self.symbols.append(symbol)
            return symbol
        if kind == R_CHAR:
            size = self._int()
            if size == -1:
                return None  # NA_character_
            raw = self._take(size)
            return raw.decode("latin-1" if levels & _R_IS_LATIN1 else "utf-8", "replace")
        if kind == R_PAIRLIST:
            if has_attributes:
                self._item()  # a pairlist cell's own attributes: not used by data tables
            tag = self._item() if has_tag else None
            head = self._item()
            rest = self._item()
            return [(tag, head)] + (rest or [])
        if kind in (R_LOGICAL, R_INTEGER):
            size = self._int()
            values = [None if value == _R_NA_INTEGER else value
                      for value in struct.unpack(f">{size}i", self._take(4 * size))]
        elif kind == R_REAL:
            size = self._int()
            values = list(struct.unpack(f">{size}d", self._take(8 * size)))
        elif kind in (R_STRING, R_LIST):
            values = [self._item() for _ in range(self._int())]
        else:
            raise DataPrepError(f"{self.where}: R object type {kind} is not supported here "
                                f"(only data tables of plain vectors)")
        attributes = dict(self._item()) if has_attributes else {}
        return RObject(kind, values, attributes)


def unserialize_r(data: bytes, where: str = "R data"):
    """An R object from its binary serialization (see `_RUnserializer` for what is read)."""
    return _RUnserializer(data, where).read()


def _decompress_r(blob: bytes, method: int, where: str) -> bytes:
    """One object of a lazy-load database: 4 bytes of length, then (method 2 or 3) one byte
    naming the compressor ('Z' xz, '2' bzip2, '1' zlib, '0' none) and the data; method 1 is
    zlib without the type byte."""
    size = struct.unpack(">I", blob[:4])[0]
    if method == 1:
        data = zlib.decompress(blob[4:])
    else:
        kind, body = blob[4:5], blob[5:]
        if kind == b"Z":
            data = lzma.decompress(body, format=lzma.FORMAT_RAW, filters=R_XZ_FILTERS)
        elif kind == b"2":
            data = bz2.decompress(body)
        elif kind == b"1":
            data = zlib.decompress(body)
        elif kind == b"0":
            data = body
        else:
            raise DataPrepError(f"{where}: unknown R compression {kind!r}")
    if len(data) != size:
        raise DataPrepError(f"{where}: {len(data)} bytes after decompression, the header "
                            f"says {size}")
    return data


def _named(obj, where: str) -> dict:
    if not isinstance(obj, RObject) or "names" not in obj.attributes:
        raise DataPrepError(f"{where}: expected a named R list")
    return dict(zip(obj.attributes["names"].values, obj.values))


def read_lazy_load_database(base: str, names: Optional[Sequence[str]] = None) -> dict:
    """The objects `names` (default: all, in the index's order) of the lazy-load database
    `<base>.rdx` / `<base>.rdb`, by name."""
    for suffix in (".rdx", ".rdb"):
        if not os.path.isfile(base + suffix):
            raise DataPrepError(f"{base + suffix}: not found")
    with open(base + ".rdx", "rb") as file:
        index_bytes = file.read()
    index_bytes = (gzip.decompress(index_bytes) if index_bytes[:2] == b"\x1f\x8b"
                   else zlib.decompress(index_bytes[4:]))
    index = _named(unserialize_r(index_bytes, base + ".rdx"), base + ".rdx")
    variables = _named(index["variables"], base + ".rdx variables")
    method = index["compressed"].values[0] if "compressed" in index else 1
    method = 1 if method is True else int(method)
    objects = {}
    with open(base + ".rdb", "rb") as file:
        for name in variables if names is None else names:
            if name not in variables:
                raise DataPrepError(f"{base}.rdx: no object {name!r} (it has "
                                    f"{', '.join(sorted(variables))})")
            offset, length = variables[name].values
            file.seek(offset)
            where = f"{base}.rdb ({name})"
            objects[name] = unserialize_r(_decompress_r(file.read(length), method, where),
                                          where)
    return objects


def data_frame_columns(frame, where: str) -> dict[str, list]:
    """A data.frame (or tibble) as column name -> values; factors become their level
    strings."""
    columns = {}
    for name, column in _named(frame, where).items():
        values = column.values
        if "levels" in column.attributes:
            levels = column.attributes["levels"].values
            values = [None if code is None else levels[code - 1] for code in values]
        columns[name] = values
    return columns

