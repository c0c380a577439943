"""`albert-data inspect`: decoded examples of a shard and statistics recomputed from its records.

Records are read with the training pipeline's own decoder (`albert_tf.data.pretraining`), so
what is shown is what the model will get. Statistics are measured from the records alone: masked
share of tokens, what masked positions hold ([MASK], the original piece, another piece), label
shares and how many examples are full length.
"""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np

from data_prep.tokenizer import MASK_ID, Tokenizer


@dataclasses.dataclass
class RecordStatistics:
    examples: int = 0
    tokens: int = 0
    masked: int = 0
    mask_token: int = 0
    kept: int = 0
    random_token: int = 0
    label_1: int = 0
    full_length: int = 0

    def add(self, example: dict[str, np.ndarray]) -> None:
        length = int(example["input_mask"].sum())
        weights = example["masked_lm_weights"] > 0
        positions = example["masked_lm_positions"][weights]
        originals = example["masked_lm_ids"][weights]
        shown = example["input_word_ids"][positions]
        self.examples += 1
        self.tokens += length
        self.masked += int(weights.sum())
        self.mask_token += int((shown == MASK_ID).sum())
        self.kept += int((shown == originals).sum())
        self.random_token += int(((shown != MASK_ID) & (shown != originals)).sum())
        self.label_1 += int(example["next_sentence_labels"][0])
        self.full_length += length == example["input_mask"].shape[0]

    def summary(self) -> dict[str, float]:
        def share(count, total):
            return round(count / total, 4) if total else 0.0
        return {"examples": self.examples,
                "masked_fraction_of_tokens": share(self.masked, self.tokens),
                "mask_token_share": share(self.mask_token, self.masked),
                "kept_share": share(self.kept, self.masked),
                "random_token_share": share(self.random_token, self.masked),
                "label_1_share": share(self.label_1, self.examples),
                "full_length_share": share(self.full_length, self.examples),
                "mean_tokens_per_example": share(self.tokens, self.examples)}


def read_examples(shard: str, max_seq_length: int, max_predictions: int):
    """Yields each record of `shard` decoded by the training pipeline, as numpy arrays."""
    import tensorflow as tf

    from albert_tf.data.pretraining import decode_record
    for record in tf.data.TFRecordDataset(shard):
        decoded = decode_record(record, max_seq_length, max_predictions)
        yield {name: tensor.numpy() for name, tensor in decoded.items()}


def render_example(example: dict[str, np.ndarray], tokenizer: Tokenizer) -> str:
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


def inspect_shard(shard: str, count: int, spm_model: str | None = None) -> str:
    """The report `albert-data inspect` prints: `count` examples, then the statistics."""
    manifest = _manifest_beside(shard)
    options = manifest["options"] if manifest else {}
    max_seq_length = options.get("max_seq_length")
    max_predictions = options.get("max_predictions_per_seq")
    spm_model = spm_model or (manifest or {}).get("tokenizer", {}).get("path")
    if not (max_seq_length and max_predictions and spm_model):
        raise ValueError(f"{shard}: no manifest.json or build.json beside it to give the "
                         "sequence lengths and tokenizer; build with albert-data")
    tokenizer = Tokenizer(spm_model, options.get("lower_case", True))
    stats = RecordStatistics()
    lines = []
    for index, example in enumerate(read_examples(shard, max_seq_length, max_predictions)):
        if index < count:
            lines.append(f"example {index}: {render_example(example, tokenizer)}")
        stats.add(example)
    lines.append("statistics: " + json.dumps(stats.summary(), indent=1))
    return "\n".join(lines)


def _manifest_beside(shard: str) -> dict | None:
    folder = os.path.dirname(os.path.abspath(shard))
    for name in ("manifest.json", "build.json"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with open(path) as file:
                return json.load(file)
    return None
