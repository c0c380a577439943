"""Does tensorflow-text's LiteRT-capable `FastSentencepieceTokenizer` give SentencePiece's ids?

    python -m albert_lab.benchmarks.fast_sentencepiece            # both tokenizers, 30,000+ lines

LiteRT (TFLite) has kernels for tensorflow-text's `FastSentencepieceTokenize` (through
`tensorflow_text`'s LiteRT op registrar), not for the `SentencepieceOp` the raw-text
SavedModel runs. A LiteRT model could take raw text only if the fast tokenizer gives the ids
SentencePiece itself gives. This script measures that on real prose the machine has, one line
per sentence:

- the docstrings of this Python's standard library, the quickstart's corpus (every 20th
  document held out from training the SentencePiece models, as the quickstart holds them out;
  the held-out lines and the training lines are counted apart) and
- the English prose of installed Debian packages (`albert-data corpus --source debian-prose`'s
  sources: man pages, GNU info manuals, ...),

tokenized by two SentencePiece models trained as this project trains them: the quickstart's
(1,000 pieces on the other docstrings) and one of 8,000 pieces (the serving benchmark's).
Both tokenizers get the same input, the line after ALBERT's normalization
(`albert_tf.text.normalize.normalize_text`, lower-cased), so only the tokenizers are compared.
The SavedModel's graph path already matches SentencePiece exactly (tests/albert_tf/export).

It also converts the graph normalization of the raw-text SavedModel
(`albert_tf.preprocessing.graph_normalization`) to LiteRT with custom ops allowed and lists
the ops that have neither a LiteRT builtin kernel nor one in tensorflow-text's registrar.

Writes `benchmarks/results/fast_sentencepiece.json` (counts and every line that differs, with
both id sequences) and `fast_sentencepiece.md` (the table and the first differing lines).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import pathlib
import re
import tempfile

import sentencepiece as spm
import tensorflow as tf
import tensorflow_text as tf_text

from albert_lab.benchmarks.common import RESULTS, machine
from albert_lab.corpora.local_corpus import stdlib_docstring_documents
from albert_lab.corpora.prose import open_sources
from albert_lab.result_files import write_result
from albert_tf.preprocessing.graph_normalization import (
    normalize_text as graph_normalize_text,
)
from albert_tf.preprocessing.graph_normalization import valid_utf8
from albert_tf.text.normalize import normalize_text
from albert_tf.text.vocabulary import train_sentencepiece

VOCAB_SIZES = (1000, 8000)
HELDOUT_EVERY = 20  # the quickstart's --heldout_every
BATCH = 512


def docstring_lines() -> tuple[list[str], list[str]]:
    """(training sentences, held-out sentences): every 20th docstring document held out."""
    training, heldout = [], []
    for index, document in enumerate(stdlib_docstring_documents()):
        (heldout if index % HELDOUT_EVERY == HELDOUT_EVERY - 1 else training).extend(document)
    return training, heldout


def debian_lines(lines_wanted: int) -> tuple[list[str], dict[str, int]]:
    """Sentences of the installed Debian prose, one source's document after another's in
    turn, and how many lines each source gave."""
    opened, _ = open_sources("debian-prose")
    lines, per_source = [], {}
    streams = [(name, documents) for name, _, documents in opened]
    while streams and len(lines) < lines_wanted:
        for name, documents in list(streams):
            document = next(documents, None)
            if document is None:
                streams.remove((name, documents))
                continue
            taken = [sentence for sentence in document if sentence.strip()]
            lines += taken
            per_source[name] = per_source.get(name, 0) + len(taken)
    return lines[:lines_wanted], per_source


def differing_lines(model_file: str, lines: list[str]) -> list[dict]:
    """The lines whose ids differ between SentencePiece and FastSentencepieceTokenizer."""
    processor = spm.SentencePieceProcessor(model_file=model_file)
    fast = tf_text.FastSentencepieceTokenizer(pathlib.Path(model_file).read_bytes())
    differ = []
    for start in range(0, len(lines), BATCH):
        batch = lines[start:start + BATCH]
        normalized = [normalize_text(line, lower_case=True) for line in batch]
        expected = processor.encode(normalized, out_type=int)
        got = fast.tokenize(tf.constant(normalized)).to_list()
        for line, text, want, have in zip(batch, normalized, expected, got):
            if want != have:
                differ.append({"line": line, "normalized": text, "sentencepiece": want,
                               "fast_sentencepiece": have,
                               "sentencepiece_pieces": processor.id_to_piece(want),
                               "fast_pieces": processor.id_to_piece(have)})
    return differ


def ops_litert_lacks() -> dict[str, list[str]]:
    """The ops of the graph normalization with no LiteRT kernel: {"ops": [...],
    "registrar_ops": [the ops tensorflow-text's LiteRT registrar adds]}."""
    from tensorflow_text.core.pybinds import tflite_registrar

    normalize = tf.function(lambda text: graph_normalize_text(valid_utf8(text), True),
                            input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [normalize.get_concrete_function()])
    converter.allow_custom_ops = True  # keep the ops LiteRT lacks as named custom ops
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        tf.lite.experimental.Analyzer.analyze(model_content=converter.convert())
    registrar = sorted(name[3:] for name in dir(tflite_registrar) if name.startswith("Add"))
    # Builtin ops print in upper case (GATHER); the others are custom ops by TensorFlow name.
    custom = sorted({op for op in re.findall(r"Op#\d+ (\w+)\(", shown.getvalue())
                     if not op.isupper()})
    return {"ops": [op for op in custom if op not in registrar], "registrar_ops": registrar}


def markdown(result: dict) -> str:
    rows = [f"| {run['vocab_size']:,} | {run['lines']:,} | {run['differ']:,} | "
            f"{100 * run['differ'] / run['lines']:.3f}% |" for run in result["runs"]]
    text = ["# FastSentencepieceTokenizer against SentencePiece", "",
            f"Made by `python -m albert_lab.benchmarks.fast_sentencepiece` on {result['host']} "
            f"(tensorflow-text {result['tensorflow_text']}, sentencepiece "
            f"{result['sentencepiece']}). Lines: {result['line_sources']}.", "",
            "| pieces | lines | lines with other ids | share |", "|---|---|---|---|", *rows, "",
            "The graph normalization's ops without a LiteRT kernel (builtin or tensorflow-text's "
            "registrar): " + ", ".join(f"`{op}`" for op in result["normalization"]["ops"])
            + ".", ""]
    for run in result["runs"]:
        text.append(f"## {run['vocab_size']:,} pieces: the first differing lines "
                    f"(all {run['differ']:,} are in fast_sentencepiece.json)")
        text.append("")
        for case in run["lines_that_differ"][:10]:
            text.append(f"- `{case['normalized']}`: SentencePiece "
                        f"`{' '.join(case['sentencepiece_pieces'])}`, fast "
                        f"`{' '.join(case['fast_pieces'])}`")
        text.append("")
    return "\n".join(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--debian_lines", type=int, default=20_000,
                        help="how many sentences of Debian prose (all docstrings are read)")
    args = parser.parse_args()
    training, heldout = docstring_lines()
    debian, per_source = debian_lines(args.debian_lines)
    lines = heldout + training + debian
    result = {"host": machine()["host"], "tensorflow_text": tf_text.__version__,
              "sentencepiece": spm.__version__,
              "line_sources": f"{len(heldout):,} held-out and {len(training):,} training "
                              f"stdlib docstring sentences, {len(debian):,} Debian prose "
                              f"sentences ("
                              + ", ".join(f"{name} {count:,}" for name, count in
                                          sorted(per_source.items())) + ")",
              "normalization": ops_litert_lacks(), "runs": []}
    with tempfile.TemporaryDirectory(prefix="fast-spm-") as folder:
        for vocab_size in VOCAB_SIZES:
            model = train_sentencepiece(
                (normalize_text(line, lower_case=True) for line in training),
                os.path.join(folder, f"spm{vocab_size}"), vocab_size=vocab_size)
            differ = differing_lines(model, lines)
            result["runs"].append({"vocab_size": vocab_size, "lines": len(lines),
                                   "differ": len(differ), "lines_that_differ": differ})
            print(f"{vocab_size:>6} pieces: {len(differ):,} of {len(lines):,} lines differ")
    path = write_result(RESULTS / "fast_sentencepiece.json", result,
                        page=markdown(result) + "\n")
    print("wrote", path, "and its .md")


if __name__ == "__main__":
    main()
