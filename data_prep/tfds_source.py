"""TFDS splits as a corpus: each record's text field is a document, split into sentences.

`tfds:wikipedia/20230601.en` style sources are read from an already prepared TFDS data folder
(`tfds build` or `download_and_prepare` done beforehand: data prep never downloads). Records are
divided among parts by index (see `corpus.plan_parts`), and each part reads only its slice with
TFDS's `split[a:b]` syntax.
"""

from __future__ import annotations

from typing import Iterator

from albert_tf.text.normalize import normalize_text
from albert_tf.text.options import DataPrepError, DataPrepOptions
from albert_tf.text.statistics import InputReport
from data_prep.sentences import split_sentences
from data_prep.sources import Document, PartPiece, TfdsSplit


def tfds_split(name: str, split: str = "train", text_field: str = "text",
               data_dir: str | None = None) -> TfdsSplit:
    """Looks up a prepared TFDS split and returns it as a corpus source."""
    builder = _builder(name, data_dir)
    if split not in builder.info.splits:
        raise DataPrepError(f"tfds:{name}: no split {split!r} (has: "
                            f"{', '.join(builder.info.splits)})")
    info = builder.info.splits[split]
    if text_field not in builder.info.features:
        raise DataPrepError(f"tfds:{name}: no feature {text_field!r} (has: "
                            f"{', '.join(builder.info.features)}); pass --tfds_text_field")
    size = int(info.num_bytes) or int(info.num_examples)
    return TfdsSplit(name, split, text_field, data_dir, int(info.num_examples), size)


def _builder(name: str, data_dir: str | None):
    try:
        import tensorflow_datasets as tfds
    except ImportError:
        raise DataPrepError("TFDS inputs need tensorflow-datasets (pip install "
                            "tensorflow-datasets)") from None
    try:
        builder = tfds.builder(name, data_dir=data_dir)
    except Exception as error:  # DatasetNotFoundError and friends
        raise DataPrepError(f"tfds:{name}: not found ({error})") from None
    if not builder.is_prepared():
        raise DataPrepError(f"tfds:{name}: not prepared in {builder.data_dir}; run `tfds build "
                            f"{name}` first (data prep never downloads)")
    return builder


def read_tfds_documents(piece: PartPiece, options: DataPrepOptions,
                        report: InputReport) -> Iterator[Document]:
    """Yields the documents of records [piece.start, piece.end) of the split."""
    import tensorflow_datasets as tfds

    source = piece.source
    if piece.start >= piece.end:
        return
    builder = _builder(source.name, source.data_dir)
    records = builder.as_dataset(split=f"{source.split}[{piece.start}:{piece.end}]",
                                 shuffle_files=False)
    where = f"tfds:{source.name}/{source.split}"
    for index, record in enumerate(tfds.as_numpy(records), start=piece.start):
        raw = record[source.text_field]
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
        except UnicodeDecodeError:
            if options.strict:
                raise DataPrepError(f"{where}[{index}]: invalid UTF-8 in the text") from None
            report.note("invalid_utf8_records", f"{where}[{index}]: invalid UTF-8; skipped")
            continue
        sentences = [normalize_text(sentence, options.lower_case)
                     for sentence in split_sentences(text.replace("\x00", " "))]
        sentences = [sentence for sentence in sentences if sentence]
        if sentences:
            yield Document(sentences, f"{where}[{index}]")
