"""Reading inputs: parts own each document exactly once; bad input is reported by file:line."""

import gzip

import pytest
from data_helpers import english_like_text

from albert_tf.text.options import DataPrepError, DataPrepOptions
from albert_tf.text.statistics import InputReport
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
    assert "huge.txt:2: line of 10,000,000 characters" in report.messages[0]


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
