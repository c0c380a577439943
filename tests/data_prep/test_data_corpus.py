"""Reading inputs: parts own each document exactly once; bad input is reported by file:line."""

import gzip

import pytest
from bounded_process import refusal, write_in_chunks
from data_helpers import english_like_text

from albert_tf.text.options import DataPrepError, DataPrepOptions
from albert_tf.text.statistics import InputReport
from data_prep import corpus
from data_prep.corpus import expand_inputs, plan_parts, read_documents

OPTIONS = DataPrepOptions(lower_case=False)


def documents_of(parts, options=OPTIONS, report=None):
    report = report if report is not None else InputReport()
    return [document.sentences for part in parts
            for document in read_documents(part, options, report)]


def write(path, text: str | bytes):
    data = text.encode() if isinstance(text, str) else text
    path.write_bytes(data)
    return str(path)


# Awkward layouts: runs of blank lines, whitespace-only separators, CRLF, no final newline,
# a leading blank line, one-line documents.
AWKWARD = ("\nfirst doc one.\nfirst doc two.\n\n\n\nsecond doc.\n   \nthird one.\r\n"
           "third two.\r\n\r\nfourth.\n \t \nfifth a.\nfifth b.\nfifth c.")


@pytest.mark.parametrize("text", [AWKWARD, english_like_text(40, seed=1)])
def test_any_number_of_parts_reads_every_document_once_in_order(tmp_path, text):
    path = write(tmp_path / "corpus.txt", text)
    files = expand_inputs([path])
    whole = documents_of(plan_parts(files, 1))
    assert len(whole) >= 5
    for num_shards in range(2, 40):
        parts = plan_parts(files, num_shards)
        assert len(parts) == num_shards
        assert documents_of(parts) == whole, num_shards


def test_awkward_layout_documents(tmp_path):
    path = write(tmp_path / "corpus.txt", AWKWARD)
    assert documents_of(plan_parts(expand_inputs([path]), 1)) == [
        ["first doc one.", "first doc two."], ["second doc."], ["third one.", "third two."],
        ["fourth."], ["fifth a.", "fifth b.", "fifth c."]]


def test_several_files_and_gzip_are_read_whole_and_in_order(tmp_path):
    plain = write(tmp_path / "a.txt", english_like_text(10, seed=2))
    packed = tmp_path / "b.txt.gz"
    packed.write_bytes(gzip.compress(english_like_text(10, seed=3).encode()))
    files = expand_inputs([plain, str(tmp_path / "*.gz")])
    whole = documents_of(plan_parts(files, 1))
    assert len(whole) == 20
    for num_shards in (2, 3, 7):
        assert documents_of(plan_parts(files, num_shards)) == whole


def test_text_is_normalized(tmp_path):
    path = write(tmp_path / "c.txt", "  Caf\u00e9   ``Ol\u00e9''  \nB.\n")
    (document,) = documents_of(plan_parts(expand_inputs([path]), 1), DataPrepOptions())
    assert document == ['cafe "ole"', "b."]


def test_bad_lines_are_skipped_counted_and_named_by_line(tmp_path):
    lines = [b"good one.", b"bad \xff\xfe utf8.", b"nul \x00 byte.", b"x" * 200,
             b"good two.", b"", b"lonely sentence."]
    path = write(tmp_path / "bad.txt", b"\n".join(lines) + b"\n")
    options = DataPrepOptions(max_line_chars=100)
    report = InputReport()
    documents = documents_of(plan_parts(expand_inputs([path]), 1), options, report)
    assert documents == [["good one.", "good two."], ["lonely sentence."]]
    assert report.counts == {"invalid_utf8_lines": 1, "nul_byte_lines": 1, "overlong_lines": 1,
                             "single_sentence_documents": 1}
    text = "\n".join(report.messages)
    for line, what in ((2, "invalid UTF-8"), (3, "NUL byte"), (4, "line of 200 characters"),
                       (7, "a document of one sentence")):
        assert f"bad.txt:{line}: {what}" in text


def test_line_numbers_are_right_in_a_part_that_starts_mid_file(tmp_path):
    text = english_like_text(30, seed=4)
    lines = text.split("\n")
    bad_line = len(lines) - 3
    lines[bad_line - 1] = "\udcff"  # will be written as invalid UTF-8
    data = "\n".join(lines).encode("utf-8", "surrogateescape")
    path = write(tmp_path / "mid.txt", data)
    report = InputReport()
    documents_of(plan_parts(expand_inputs([path]), 5), OPTIONS, report)
    assert report.counts["invalid_utf8_lines"] == 1
    assert f"mid.txt:{bad_line}: invalid UTF-8" in report.messages[0]


def test_strict_mode_fails_with_file_and_line(tmp_path):
    path = write(tmp_path / "bad.txt", b"fine.\nnot \xc3\x28 fine.\n")
    with pytest.raises(DataPrepError, match=r"bad\.txt:2: invalid UTF-8"):
        documents_of(plan_parts(expand_inputs([path]), 1), DataPrepOptions(strict=True))


def test_a_ten_megabyte_line_is_skipped_without_trouble(tmp_path):
    path = write(tmp_path / "huge.txt", b"ok.\n" + b"word " * 2_000_000 + b"\nok too.\n")
    report = InputReport()
    documents = documents_of(plan_parts(expand_inputs([path]), 3), OPTIONS, report)
    assert documents == [["ok.", "ok too."]]
    assert report.messages[0].startswith(
        f"{path}:2: line of 10,000,001 bytes, more than max_line_chars=100,000 characters")


def read_in_a_child(inputs, setup: str = "", memory_mb: int = 96) -> str:
    """Documents and report of reading `inputs` in one part, in a child whose address space
    is capped at `memory_mb` (the reader takes about 30 MB before reading anything)."""
    return refusal(f"""
        from albert_tf.text.options import DataPrepError, DataPrepOptions
        from albert_tf.text.statistics import InputReport
        from data_prep import corpus
        {setup}
        report = InputReport()
        try:
            (part,) = corpus.plan_parts(corpus.expand_inputs({inputs!r}), 1)
            print([d.sentences for d in corpus.read_documents(part, DataPrepOptions(), report)])
            print(report.counts, report.messages)
        except DataPrepError as error:
            print("refused:", error)
        """, memory_mb=memory_mb)


def test_a_100_megabyte_line_is_skipped_in_bounded_memory(tmp_path):
    """Read whole, the line alone would take more than the child's 96 MB."""
    path = write_in_chunks(tmp_path / "line.txt", [b"ok.\n", *[b"word " * 200_000] * 100,
                                                   b"\nok too.\n"])
    documents, report = read_in_a_child([path]).split("\n")
    assert documents == "[['ok.', 'ok too.']]"
    assert "{'overlong_lines': 1}" in report
    assert f"{path}:2: line of 100,000,001 bytes, more than max_line_chars" in report


def test_a_document_over_the_limit_is_skipped_by_every_part_alike(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus, "MAX_DOCUMENT_BYTES", 200)
    long_document = "".join(f"Sentence number {i} of a long one.\n" for i in range(40))
    path = write(tmp_path / "docs.txt", "First doc.\nTwo.\n\n" + long_document
                 + "\nLast doc.\nEnds.\n")
    for num_shards in (1, 2, 3, 7, 20):
        report = InputReport()
        assert documents_of(plan_parts(expand_inputs([path]), num_shards), OPTIONS,
                            report) == [["First doc.", "Two."], ["Last doc.", "Ends."]]
        assert report.counts == {"overlong_documents": 1}
        assert report.messages == [f"{path}:4: a document of more than 200 bytes (no blank "
                                   "line between documents?); document skipped"]
    with pytest.raises(DataPrepError, match=r"docs.txt:4: a document of more than 200 bytes.*"
                                            r"drop --strict to skip such documents"):
        documents_of(plan_parts(expand_inputs([path]), 1), DataPrepOptions(strict=True))


def test_a_file_without_blank_lines_is_read_in_bounded_memory(tmp_path):
    """64 MB of sentences without a blank line, under a 4 MB document limit: held whole, the
    lines would take more than the child's 96 MB."""
    path = write_in_chunks(tmp_path / "one.txt", [b"A sentence that goes on.\n" * 40_000] * 64)
    said = read_in_a_child([path], setup="corpus.MAX_DOCUMENT_BYTES = 4 << 20")
    documents, report = said.split("\n")
    assert documents == "[]"
    assert "{'overlong_documents': 1}" in report and f"{path}:1: a document of more" in report


def gzip_with_trailer(text: bytes, claimed: int) -> bytes:
    """`text` gzipped, its trailer's size field set to `claimed`."""
    data = bytearray(gzip.compress(text, compresslevel=1))
    data[-4:] = (claimed % 2**32).to_bytes(4, "little")
    return bytes(data)


def test_a_gzip_input_is_planned_by_the_text_its_trailer_records(tmp_path):
    text = english_like_text(30, seed=2).encode()
    path = write(tmp_path / "c.txt.gz", gzip.compress(text))
    (source,) = expand_inputs([path])
    assert source.size == len(text) > 2 * len(gzip.compress(text))
    assert documents_of(plan_parts([source], 1)) == documents_of(
        plan_parts(expand_inputs([write(tmp_path / "c.txt", text)]), 1))


def test_a_gzip_bomb_with_a_false_trailer_is_refused_where_it_passes_its_plan(tmp_path):
    """200 MB of sentences in 1 MB of gzip whose trailer claims 1,000 bytes: the reader
    stops at byte 1,001 of the text, in a child with 96 MB of address space."""
    bomb = gzip_with_trailer(b"Word word word.\n\n" * 11_000_000, claimed=1_000)
    path = write(tmp_path / "bomb.txt.gz", bomb)
    assert read_in_a_child([path]) == (
        f"refused: {path}: holds more than the 1,000 bytes of text its gzip trailer records, "
        "the size the build was planned with (a gzip bomb, gzip members joined together, or "
        "more than 4 GiB of text); decompress it, or split it into smaller .gz files")


def test_an_honest_gzip_bomb_is_read_in_bounded_memory(tmp_path):
    """100 MB of zeros in 100 kB of gzip, its trailer true: one line of 100 MB, skipped
    without being held."""
    path = write(tmp_path / "zeros.txt.gz", gzip.compress(bytes(100 << 20), compresslevel=1))
    documents, report = read_in_a_child([path]).split("\n")
    assert documents == "[]" and "{'overlong_lines': 1}" in report


def test_a_gz_file_that_is_not_gzip_or_is_corrupt_is_named(tmp_path):
    with pytest.raises(DataPrepError, match=r"plain.gz: not gzip data \(a .gz file starts "
                                            r"with bytes 1f 8b.*it starts with 4e6f"):
        expand_inputs([write(tmp_path / "plain.gz", "Not gzip at all, but long enough.")])
    data = bytearray(gzip.compress(english_like_text(20, seed=3).encode()))
    data[-8] ^= 0xFF  # the trailer's CRC of the text
    path = write(tmp_path / "corrupt.gz", bytes(data))
    with pytest.raises(DataPrepError, match=r"corrupt.gz: corrupt gzip data after [\d,]+ "
                                            r"bytes of text"):
        documents_of(plan_parts(expand_inputs([path]), 1))


def test_missing_and_empty_inputs(tmp_path):
    with pytest.raises(DataPrepError, match="nothing.txt.*no such file"):
        expand_inputs([str(tmp_path / "nothing.txt")])
    with pytest.raises(DataPrepError, match=r"\*.md.*no such file"):
        expand_inputs([str(tmp_path / "*.md")])
    empty = write(tmp_path / "empty.txt", "")
    with pytest.raises(DataPrepError, match="hold no text.*empty.txt"):
        plan_parts(expand_inputs([empty]), 4)
    with pytest.raises(DataPrepError, match="is a directory"):
        expand_inputs([str(tmp_path)])
    report = InputReport()
    full = write(tmp_path / "full.txt", "one.\ntwo.\n")
    assert documents_of(plan_parts(expand_inputs([empty, full]), 2), OPTIONS, report) == \
        [["one.", "two."]]
    assert report.counts == {"empty_files": 1}


def test_plans_cover_every_byte_of_many_files_exactly_once():
    import random

    from data_prep.corpus import TextFile
    rng = random.Random(0)
    sources = [TextFile(f"f{i}.txt" if i % 7 else f"f{i}.txt.gz", rng.randint(0, 5000))
               for i in range(3000)]
    parts = plan_parts(sources, 2000)
    covered = {}
    for part in parts:
        for piece in part.pieces:
            covered.setdefault(piece.source.path, []).append((piece.start, piece.end))
    for source in sources:
        ranges = sorted(covered[source.path])
        assert ranges[0][0] == 0 and ranges[-1][1] == source.size
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
        if source.compressed or source.size == 0:
            assert len(ranges) == 1
