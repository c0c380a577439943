"""Corpora from text on the machine: reST prose extraction and the standard library's docs."""

from albert_tf.text.options import DataPrepOptions
from albert_tf.text.statistics import InputReport
from data_prep.cli import main
from data_prep.corpus import expand_inputs, plan_parts, read_documents
from data_prep.local_corpus import rst_documents

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
    from data_prep.local_corpus import write_corpus

    documents = [[f"sentence {i} a.", f"sentence {i} b."] for i in range(10)]
    written = write_corpus(iter(documents), str(tmp_path / "corpus" / "train.txt"),
                           heldout_path=str(tmp_path / "heldout.txt"), heldout_every=3)
    assert (written["documents"], written["heldout_documents"]) == (7, 3)
    train = (tmp_path / "corpus" / "train.txt").read_text().strip().split("\n\n")
    heldout = (tmp_path / "heldout.txt").read_text().strip().split("\n\n")
    assert [block.split("\n")[0] for block in heldout] == [
        "sentence 2 a.", "sentence 5 a.", "sentence 8 a."]
    assert sorted(train + heldout) == sorted("\n".join(d) for d in documents)
