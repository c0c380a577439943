"""`albert_lab.corpora.rdata` on hostile R serializations: every impossible size, reference, nesting
or decompressed length is a DataPrepError naming the file and byte, read in a child process
whose memory is capped (no Python exception from deep inside, no allocation the bytes cannot
back)."""

from __future__ import annotations

import struct
import zlib

import pytest
from bounded_process import refusal

from albert_lab.corpora.rdata import RObject, unserialize_r

HEADER = b"X\n" + struct.pack(">iii", 2, 0x040203, 0x020300)  # version 2: no encoding name
NIL, SYMBOL, PAIRLIST, CHAR, INTEGER, STRING, LIST = 254, 1, 2, 9, 13, 16, 19
WITH_ATTRIBUTES, WITH_TAG = 1 << 9, 1 << 10


def ints(*values: int) -> bytes:
    return struct.pack(f">{len(values)}i", *values)


def char(text: str) -> bytes:
    data = text.encode()
    return ints(CHAR, len(data)) + data


def unserialized_in_a_child(data: bytes, where: str = "hostile.rds") -> str:
    """What unserialize_r says of `data`, read with 96 MB of address space."""
    return refusal(f"""
        from albert_lab.corpora.rdata import unserialize_r
        from albert_tf.text.options import DataPrepError
        try:
            print("read", type(unserialize_r(bytes.fromhex({data.hex()!r}), {where!r})))
        except DataPrepError as error:
            print("refused:", error)
        """)


HOSTILE = {
    "a negative string length (once moved the reader backwards)":
        (ints(STRING, 1) + ints(CHAR, -100), "at byte 26 of the serialization: negative "
                                             "length -100"),
    "3 million strings claimed by a 30-byte payload":
        (ints(STRING, 3_000_000) + ints(NIL, NIL), "at byte 18 of the serialization: a vector "
                                                   "of 3000000 elements cannot fit in the 8"),
    "a negative integer count (once struct.error)":
        (ints(INTEGER, -5), "a vector of -5 elements cannot fit"),
    "a length past the end":
        (ints(STRING, 1) + ints(CHAR, 1000) + b"abc", "a length of 1000 bytes, but only 3 are "
                                                      "left"),
    "lists nested 5000 deep (once RecursionError)":
        (ints(LIST, 1) * 5000 + ints(NIL), "objects nested more than 100 deep"),
    "a reference to a symbol never read":
        (ints(INTEGER | WITH_ATTRIBUTES, 0) + ints(PAIRLIST | WITH_TAG, 7 << 8 | 255, NIL, NIL),
         "reference to symbol 7, but 0 were read"),
    "an object type data tables do not use (a closure)":
        (ints(3), "R object type 3 is not supported"),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_r_serialization_is_refused_by_file_and_byte(case):
    payload, message = HOSTILE[case]
    said = unserialized_in_a_child(HEADER + payload)
    assert said.startswith("refused: hostile.rds: "), said
    assert message in said


def test_a_pairlist_of_many_cells_is_read_in_a_loop():
    """100,000 attributes: R writes each pairlist cell's tail as the next cell, which read
    recursively once overflowed Python's stack."""
    cells = b"".join(ints(PAIRLIST | WITH_TAG, SYMBOL) + char(f"a{index}") + ints(NIL)
                     for index in range(100_000))
    obj = unserialize_r(HEADER + ints(INTEGER | WITH_ATTRIBUTES, 1, 7) + cells + ints(NIL))
    assert obj.values == [7] and len(obj.attributes) == 100_000
    assert obj.attributes["a99999"] is None


def write_database(base, blob: bytes, offset: int = 0, length: int | None = None) -> None:
    """`<base>.rdb` holding `blob` and a zlib-method index naming it `x` at (offset, length)."""
    location = ints(INTEGER, 2, offset, len(blob) if length is None else length)

    def named(value: bytes, name: str) -> bytes:
        return (ints(LIST | WITH_ATTRIBUTES, 1) + value
                + ints(PAIRLIST | WITH_TAG, SYMBOL) + char("names")
                + ints(STRING, 1) + char(name) + ints(NIL))
    index = HEADER + named(named(location, "x"), "variables")
    (base.parent / (base.name + ".rdx")).write_bytes(
        struct.pack(">I", len(index)) + zlib.compress(index))
    (base.parent / (base.name + ".rdb")).write_bytes(blob)


def read_database_in_a_child(base) -> str:
    return refusal(f"""
        from albert_lab.corpora.rdata import read_lazy_load_database
        from albert_tf.text.options import DataPrepError
        try:
            print("read", read_lazy_load_database({str(base)!r}))
        except DataPrepError as error:
            print("refused:", error)
        """)


def test_a_decompression_bomb_in_the_database_stops_at_the_length_it_claims(tmp_path):
    """50 MB of zeros in 50 kB of zlib, under a header that claims 100 bytes: decompression
    stops at 101 bytes, in a child with 96 MB of address space."""
    bomb = struct.pack(">I", 100) + zlib.compress(bytes(50 << 20), 9)
    write_database(tmp_path / "Rdata", bomb)
    said = read_database_in_a_child(tmp_path / "Rdata")
    assert said == (f"refused: {tmp_path}/Rdata.rdb (x, at byte 0): more bytes after "
                    "decompression, the header says 100")


def test_an_object_claiming_more_than_the_limit_is_refused_before_decompressing(tmp_path):
    write_database(tmp_path / "Rdata", struct.pack(">I", 3 << 30) + zlib.compress(b"x"))
    said = read_database_in_a_child(tmp_path / "Rdata")
    assert "the object claims 3,221,225,472 bytes after decompression, more than" in said


def test_an_index_pointing_past_the_end_of_the_database_is_refused(tmp_path):
    write_database(tmp_path / "Rdata", b"\x00" * 10, offset=4, length=2**31 - 1)
    said = read_database_in_a_child(tmp_path / "Rdata")
    assert said == (f"refused: {tmp_path}/Rdata.rdx: the index puts 'x' at bytes "
                    f"4...{4 + 2**31 - 1}, outside the 10-byte .rdb")


def test_a_well_formed_object_still_reads():
    data = HEADER + ints(INTEGER | WITH_ATTRIBUTES, 2, 1, -2**31) + ints(
        PAIRLIST | WITH_TAG, SYMBOL) + char("names") + ints(STRING, 2) + char("a") + char(
        "b") + ints(NIL)
    assert unserialize_r(data) == RObject(INTEGER, [1, None], {
        "names": RObject(STRING, ["a", "b"], {})})
