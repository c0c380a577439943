"""The made-up task of the raw-text model, fine-tuning-on-files and prediction tests: a
sentence of ordinary words around one word of four that decides its label
(`data_helpers.sentiment_rows`), with the labels named."""

from data_helpers import sentiment_rows

SEQ = 32  # the sequence length the tiny start records
NAMES = ("sad", "glad")


def labelled(count: int, seed: int) -> tuple[list[str], list[str]]:
    """(texts, label names) of `count` made-up rows."""
    rows = sentiment_rows(count, seed)
    return [text for text, _ in rows], [NAMES[label] for _, label in rows]
