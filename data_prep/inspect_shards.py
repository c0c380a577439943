"""`albert-data inspect`: decoded examples of a shard and statistics recomputed from its records.

Records are read with the training pipeline's own decoder (`albert_tf.data.pretraining`), so
what is shown is what the model will get. Statistics are measured from the records alone: masked
share of tokens, what masked positions hold ([MASK], the original piece, another piece), label
shares and how many examples are full length.
"""

from __future__ import annotations

import json
import os

import numpy as np

from albert_tf.text import files
from albert_tf.text.statistics import ExampleStatistics
from albert_tf.text.tokenizer import MASK_ID, SentencePieceTokenizer


class RecordStatistics:
    """Example statistics measured from records alone (what the model will see)."""

    # The rates of ExampleStatistics.summary() that records can tell.
    MEASURABLE = ("masked_fraction_of_tokens", "mask_token_share", "kept_share",
                  "random_token_share", "label_1_share", "full_length_share",
                  "mean_tokens_per_example")

    def __init__(self):
        self.counts = ExampleStatistics()

    def add(self, example: dict[str, np.ndarray]) -> None:
        counts = self.counts
        length = int(example["input_mask"].sum())
        weights = example["masked_lm_weights"] > 0
        originals = example["masked_lm_ids"][weights]
        shown = example["input_word_ids"][example["masked_lm_positions"][weights]]
        counts.examples += 1
        counts.tokens += length
        counts.masked_tokens += int(weights.sum())
        counts.replaced_by_mask += int((shown == MASK_ID).sum())
        counts.kept_original += int((shown == originals).sum())
        counts.replaced_by_random += int(((shown != MASK_ID) & (shown != originals)).sum())
        counts.count_label(int(example["next_sentence_labels"][0]))
        counts.full_length_examples += length == example["input_mask"].shape[0]

    def summary(self) -> dict[str, float]:
        rates = self.counts.summary()
        return {"examples": self.counts.examples,
                **{name: round(rates[name], 4) for name in self.MEASURABLE}}


def read_examples(shard: str, max_seq_length: int, max_predictions: int):
    """Yields each record of `shard` decoded by the training pipeline, as numpy arrays."""
    import tensorflow as tf

    from albert_tf.text.features import decode_record
    for record in tf.data.TFRecordDataset(shard):
        decoded = decode_record(record, max_seq_length, max_predictions)
        yield {name: tensor.numpy() for name, tensor in decoded.items()}


def render_example(example: dict[str, np.ndarray], tokenizer: SentencePieceTokenizer) -> str:
    """Pieces of one example with each masked position shown as `shown<-original`."""
    length = int(example["input_mask"].sum())
    ids = example["input_word_ids"][:length]
    pieces = tokenizer.pieces(ids)
    weights = example["masked_lm_weights"] > 0
    for position, original in zip(example["masked_lm_positions"][weights],
                                  example["masked_lm_ids"][weights]):
        pieces[position] = f"{pieces[position]}<-{tokenizer.pieces([original])[0]}"
    segments = example["input_type_ids"][:length]
    label = int(example["next_sentence_labels"][0])
    return (f"label {label}, {length} tokens, {int(weights.sum())} masked, segment B from "
            f"{int(np.argmax(segments)) if segments.any() else '-'}\n  " + " ".join(pieces))


def inspect_shard(shard: str, count: int, spm_model: str | None = None,
                  max_seq_length: int | None = None, max_predictions: int | None = None) -> str:
    """The report `albert-data inspect` prints: `count` examples, then the statistics.

    Lengths and tokenizer come from the manifest beside the shard unless given (for files
    of the original script, which have none).
    """
    manifest = _manifest_beside(shard) or {}
    options = manifest.get("options", {})
    max_seq_length = max_seq_length or options.get("max_seq_length")
    max_predictions = max_predictions or options.get("max_predictions_per_seq")
    spm_model = spm_model or manifest.get("tokenizer", {}).get("path")
    if not (max_seq_length and max_predictions and spm_model):
        raise ValueError(f"{shard}: no manifest.json or build.json beside it; pass "
                         "--spm_model, --max_seq_length and --max_predictions_per_seq")
    tokenizer = SentencePieceTokenizer(spm_model)
    stats = RecordStatistics()
    lines = []
    for index, example in enumerate(read_examples(shard, max_seq_length, max_predictions)):
        if index < count:
            lines.append(f"example {index}: {render_example(example, tokenizer)}")
        stats.add(example)
    lines.append("statistics: " + json.dumps(stats.summary(), indent=1))
    return "\n".join(lines)


def _manifest_beside(shard: str) -> dict | None:
    """The manifest (or build plan) in the shard's folder, local or remote, if there is one."""
    folder = os.path.dirname(shard if files.is_remote(shard) else os.path.abspath(shard))
    for name in ("manifest.json", "build.json"):
        path = os.path.join(folder, name)
        if files.exists(path):
            return json.loads(files.read_bytes(path))
    return None
