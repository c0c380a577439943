"""R's lazy-load databases, read without R: what `R CMD INSTALL` makes of a package's data/,
`<base>.rdx` (an index: a serialized list of variables -> (offset, length) in the .rdb) and
`<base>.rdb` (each object serialized in R's XDR format and compressed).

Both the fine-foods task (modeldata's tibbles) and the jane-austen prose source
(janeaustenr's character vectors) read their package's data through this module.
"""

from __future__ import annotations

import bz2
import dataclasses
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
_HAS_ATTRIBUTES, _HAS_TAG = 1 << 9, 1 << 10
# Limits on what a file may claim: data tables nest a few levels deep, and the largest object
# read here (janeaustenr's novels, modeldata's tibbles) decompresses to a few MB.
MAX_DEPTH = 100
MAX_OBJECT_BYTES = 1 << 30
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
    row.names). Other objects (functions, environments, ALTREP) raise DataPrepError, and so
    does every size the bytes cannot hold: a count or length is checked against the bytes
    left before anything is allocated, nesting is limited to MAX_DEPTH, and a pairlist (R's
    linked list) is walked in a loop, so no input reaches Python's recursion limit."""

    def __init__(self, data: bytes, where: str):
        self.data, self.position, self.where, self.symbols = data, 0, where, []
        self.depth = 0
        self.field = 0  # where the last number read starts: the one an error is about

    def _error(self, what: str) -> DataPrepError:
        return DataPrepError(f"{self.where}: at byte {self.field} of the serialization: "
                             f"{what}")

    def _take(self, size: int) -> bytes:
        left = len(self.data) - self.position
        if size < 0:
            raise self._error(f"negative length {size}")
        if size > left:
            raise self._error(f"a length of {size} bytes, but only {left} are left")
        chunk = self.data[self.position:self.position + size]
        self.position += size
        return chunk

    def _int(self) -> int:
        self.field = self.position
        return struct.unpack(">i", self._take(4))[0]

    def _count(self, item_bytes: int) -> int:
        """A vector's length, checked against the bytes left (each item takes at least
        `item_bytes`)."""
        count = self._int()
        left = len(self.data) - self.position
        if count < 0 or count * item_bytes > left:
            raise self._error(f"a vector of {count} elements cannot fit in the {left} bytes "
                              "left")
        return count

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

    def _item(self, flags: int | None = None):
        if self.depth >= MAX_DEPTH:
            raise self._error(f"objects nested more than {MAX_DEPTH} deep (a data table "
                              "nests a few levels)")
        self.depth += 1
        try:
            return self._object(self._int() if flags is None else flags)
        finally:
            self.depth -= 1

    def _object(self, flags: int):
        kind, levels = flags & 0xFF, flags >> 12
        if kind == R_NIL:
            return None
        if kind == R_REF:
            index = (flags >> 8) or self._int()
            if not 1 <= index <= len(self.symbols):
                raise self._error(f"reference to symbol {index}, but {len(self.symbols)} "
                                  "were read")
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
            return self._pairlist(flags)
        if kind in (R_LOGICAL, R_INTEGER):
            size = self._count(4)
            values = [None if value == _R_NA_INTEGER else value
                      for value in struct.unpack(f">{size}i", self._take(4 * size))]
        elif kind == R_REAL:
            size = self._count(8)
            values = list(struct.unpack(f">{size}d", self._take(8 * size)))
        elif kind in (R_STRING, R_LIST):
            values = [self._item() for _ in range(self._count(4))]
        else:
            raise self._error(f"R object type {kind} is not supported here (only data "
                              "tables of plain vectors)")
        attributes = self._attributes() if flags & _HAS_ATTRIBUTES else {}
        return RObject(kind, values, attributes)

    def _pairlist(self, flags: int) -> list:
        """A pairlist's (tag, value) cells, read in a loop: R writes each cell's tail as the
        next cell, so a long list would otherwise recurse once per element."""
        cells = []
        while True:
            if flags & _HAS_ATTRIBUTES:
                self._item()  # a pairlist cell's own attributes: not used by data tables
            tag = self._item() if flags & _HAS_TAG else None
            cells.append((tag, self._item()))
            flags = self._int()
            if flags & 0xFF == R_NIL:
                return cells
            if flags & 0xFF != R_PAIRLIST:
                raise self._error(f"a pairlist ends in an object of type {flags & 0xFF}, "
                                  "not in NULL")

    def _attributes(self) -> dict:
        attributes = self._item()
        if not isinstance(attributes, list):
            raise self._error("attributes that are not a pairlist")
        return {tag: value for tag, value in attributes}


def unserialize_r(data: bytes, where: str = "R data"):
    """An R object from its binary serialization (see `_RUnserializer` for what is read)."""
    return _RUnserializer(data, where).read()


def _decompress_r(blob: bytes, method: int, where: str) -> bytes:
    """One object of a lazy-load database: 4 bytes of length, then (method 2 or 3) one byte
    naming the compressor ('Z' xz, '2' bzip2, '1' zlib, '0' none) and the data; method 1 is
    zlib without the type byte. Decompression stops one byte past the recorded length, so a
    file that decompresses to more (a bomb) costs no more memory than it claims."""
    if len(blob) < 5:
        raise DataPrepError(f"{where}: an object of {len(blob)} bytes (R writes at least 5)")
    size = struct.unpack(">I", blob[:4])[0]
    if size > MAX_OBJECT_BYTES:
        raise DataPrepError(f"{where}: the object claims {size:,} bytes after decompression, "
                            f"more than the {MAX_OBJECT_BYTES:,} a data object may have here")
    kind, body = (b"1", blob[4:]) if method == 1 else (blob[4:5], blob[5:])
    decompressors = {b"Z": lambda: lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=R_XZ_FILTERS),
                     b"2": bz2.BZ2Decompressor, b"1": zlib.decompressobj}
    if kind == b"0":
        data = body
    elif kind in decompressors:
        try:
            data = decompressors[kind]().decompress(body, size + 1)
        except (lzma.LZMAError, OSError, EOFError, ValueError, zlib.error) as error:
            raise DataPrepError(f"{where}: cannot decompress ({error})") from None
    else:
        raise DataPrepError(f"{where}: unknown R compression {kind!r}")
    if len(data) != size:
        more = "more" if len(data) > size else str(len(data))
        raise DataPrepError(f"{where}: {more} bytes after decompression, the header "
                            f"says {size}")
    return data


def _named(obj, where: str) -> dict:
    if not isinstance(obj, RObject) or not isinstance(obj.attributes.get("names"), RObject):
        raise DataPrepError(f"{where}: expected a named R list")
    names = obj.attributes["names"].values
    if len(names) != len(obj.values):
        raise DataPrepError(f"{where}: {len(names)} names for {len(obj.values)} values")
    return dict(zip(names, obj.values))


def _read_index(path: str) -> dict:
    """The `.rdx` index: a gzip (or length-prefixed zlib) serialized named list."""
    if os.path.getsize(path) > MAX_OBJECT_BYTES:
        raise DataPrepError(f"{path}: an index of more than {MAX_OBJECT_BYTES:,} bytes")
    with open(path, "rb") as file:
        index_bytes = file.read()
    if index_bytes[:2] == b"\x1f\x8b":
        decompressor = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            index_bytes = decompressor.decompress(index_bytes, MAX_OBJECT_BYTES)
        except zlib.error as error:
            raise DataPrepError(f"{path}: cannot decompress ({error})") from None
    else:
        index_bytes = _decompress_r(index_bytes, 1, path)
    return _named(unserialize_r(index_bytes, path), path)


def _location(variables: dict, name: str, rdb_size: int, where: str) -> tuple[int, int]:
    """(offset, length) of object `name` in the `.rdb`, checked against the file's size."""
    location = variables[name]
    values = location.values if isinstance(location, RObject) else None
    if (not values or len(values) != 2
            or not all(isinstance(value, (int, float)) for value in values)):
        raise DataPrepError(f"{where}: the index holds no (offset, length) for {name!r}")
    offset, length = (int(value) for value in values)
    if offset < 0 or length < 0 or offset + length > rdb_size:
        raise DataPrepError(f"{where}: the index puts {name!r} at bytes {offset}..."
                            f"{offset + length}, outside the {rdb_size}-byte .rdb")
    return offset, length


def read_lazy_load_database(base: str, names: Optional[Sequence[str]] = None) -> dict:
    """The objects `names` (default: all, in the index's order) of the lazy-load database
    `<base>.rdx` / `<base>.rdb`, by name."""
    for suffix in (".rdx", ".rdb"):
        if not os.path.isfile(base + suffix):
            raise DataPrepError(f"{base + suffix}: not found")
    index = _read_index(base + ".rdx")
    if "variables" not in index:
        raise DataPrepError(f"{base}.rdx: no 'variables' in the index")
    variables = _named(index["variables"], base + ".rdx variables")
    compressed = index.get("compressed")
    method = compressed.values[0] if isinstance(compressed, RObject) and compressed.values \
        else 1
    method = 1 if method is True else int(method or 0)
    objects = {}
    rdb_size = os.path.getsize(base + ".rdb")
    with open(base + ".rdb", "rb") as file:
        for name in variables if names is None else names:
            if name not in variables:
                raise DataPrepError(f"{base}.rdx: no object {name!r} (it has "
                                    f"{', '.join(sorted(map(str, variables)))})")
            offset, length = _location(variables, name, rdb_size, f"{base}.rdx")
            file.seek(offset)
            where = f"{base}.rdb ({name}, at byte {offset})"
            objects[name] = unserialize_r(_decompress_r(file.read(length), method, where),
                                          where)
    return objects


def data_frame_columns(frame, where: str) -> dict[str, list]:
    """A data.frame (or tibble) as column name -> values; factors become their level
    strings."""
    columns = {}
    for name, column in _named(frame, where).items():
        if not isinstance(column, RObject):
            raise DataPrepError(f"{where}: column {name!r} is not a vector")
        values = column.values
        if "levels" in column.attributes:
            levels = column.attributes["levels"].values
            if any(code is not None and not 1 <= code <= len(levels) for code in values):
                raise DataPrepError(f"{where}: factor column {name!r} has codes outside "
                                    f"1..{len(levels)}")
            values = [None if code is None else levels[code - 1] for code in values]
        columns[name] = values
    return columns
