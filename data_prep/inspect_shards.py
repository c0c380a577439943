"""`albert-data inspect`: decoded examples of a shard and statistics recomputed from its records.

Records are read with the training pipeline's own decoder (`albert_tf.records.features`), so
what is shown is what the model will get. Statistics are measured from the records alone: masked
share of tokens, what masked positions hold ([MASK], the original piece, another piece), label
shares and how many examples are full length.

The report streams: the header and the first examples appear as soon as they are decoded,
then the statistics, over the first `max_examples` records (all of them if None; a progress
bar shows that pass). Records are decoded a batch at a time and counted with numpy, so the
statistics pass reads tens of thousands of records a second.
"""

from __future__ import annotations

import json
import os
from typing import Iterator

import numpy as np

from albert_tf.io import files
from albert_tf.text.options import SENTENCE_LABELS
from albert_tf.text.statistics import ExampleStatistics, format_summary
from albert_tf.text.vocabulary import MASK_ID, SentencePieceTokenizer
from data_prep.manifest import sidecar_path

DEFAULT_MAX_EXAMPLES = 5000
DECODE_BATCH = 1024


class RecordStatistics:
    """Example statistics measured from records alone (what the model will see)."""

    # The rates of ExampleStatistics.summary() that records can tell.
    MEASURABLE = ("masked_fraction_of_tokens", "mask_token_share", "kept_share",
                  "random_token_share", "label_1_share", "full_length_share",
                  "mean_tokens_per_example")

    def __init__(self):
        self.counts = ExampleStatistics()

    def add(self, batch: dict[str, np.ndarray]) -> None:
        """Counts a batch of decoded examples (leading dimension: examples)."""
        counts = self.counts
        input_mask = batch["input_mask"]
        lengths = input_mask.sum(axis=1)
        weights = batch["masked_lm_weights"] > 0
        originals = batch["masked_lm_ids"]
        shown = np.take_along_axis(batch["input_word_ids"], batch["masked_lm_positions"],
                                   axis=1)
        counts.examples += len(lengths)
        counts.tokens += int(lengths.sum())
        counts.masked_tokens += int(weights.sum())
        counts.replaced_by_mask += int((weights & (shown == MASK_ID)).sum())
        counts.kept_original += int((weights & (shown == originals)).sum())
        counts.replaced_by_random += int(
            (weights & (shown != MASK_ID) & (shown != originals)).sum())
        for label, count in enumerate(np.bincount(batch["next_sentence_labels"][:, 0])):
            if count:
                counts.count_label(label, int(count))
        counts.full_length_examples += int((lengths == input_mask.shape[1]).sum())

    def summary(self) -> dict[str, float]:
        rates = self.counts.summary()
        return {"examples": self.counts.examples,
                **{name: round(rates[name], 4) for name in self.MEASURABLE}}


def read_batches(shard: str, max_seq_length: int, max_predictions: int,
                 max_examples: int | None = None,
                 batch_size: int = DECODE_BATCH) -> Iterator[dict[str, np.ndarray]]:
    """Yields the first `max_examples` records of `shard` (all if None) decoded by the
    training pipeline, as numpy batches of up to `batch_size` examples."""
    import tensorflow as tf

    from albert_tf.records.features import decode_record

    records = tf.data.TFRecordDataset(shard, buffer_size=1 << 22)
    if max_examples is not None:
        records = records.take(max_examples)
    batches = records.batch(batch_size).map(
        lambda serialized: decode_record(serialized, max_seq_length, max_predictions),
        num_parallel_calls=tf.data.AUTOTUNE).prefetch(2)
    yield from batches.as_numpy_iterator()


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
                  max_seq_length: int | None = None, max_predictions: int | None = None,
                  max_examples: int | None = DEFAULT_MAX_EXAMPLES,
                  progress: bool = False) -> Iterator[str]:
    """The report `albert-data inspect` prints, a block of lines at a time: a header, `count`
    examples, then the statistics of the first `max_examples` records (all if None).

    Lengths, tokenizer and sentence objective come from the manifest beside the shard unless
    given (for files of the original script, which have none).
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
    objective = options.get("sentence_objective")
    total = _examples_in(shard, manifest)
    yield _header(shard, total, max_seq_length, max_predictions, objective)
    if max_examples is not None and total is not None and max_examples >= total:
        max_examples = None  # the whole shard
    batches = read_batches(shard, max_seq_length, max_predictions, max_examples)
    stats = RecordStatistics()
    bar = _progress_bar(max_examples if max_examples is not None else total, progress)
    try:
        for batch in batches:
            for index in range(stats.counts.examples,
                               min(count, stats.counts.examples + len(batch["input_mask"]))):
                example = {name: values[index - stats.counts.examples]
                           for name, values in batch.items()}
                yield f"example {index}: {render_example(example, tokenizer)}"
            stats.add(batch)
            bar.update(len(batch["input_mask"]))
    finally:
        bar.close()
    summary = stats.summary()
    scope = "every record" if max_examples is None else \
        f"the first {summary['examples']:,} records (--all for every one)"
    yield f"statistics over {scope}:\n" + format_summary(summary, objective)


def _header(shard, total, max_seq_length, max_predictions, objective) -> str:
    examples = f"{total:,} examples" if total is not None else "examples not recorded"
    label = (f"sentence objective {objective}: label {SENTENCE_LABELS[objective]}"
             if objective in SENTENCE_LABELS else
             "sentence objective not recorded: label 1 = swapped (SOP) or random (NSP)")
    return (f"{shard}: {examples}, sequences of {max_seq_length}, up to {max_predictions} "
            f"predictions\n{label}")


def _progress_bar(total: int | None, enabled: bool):
    from tqdm import tqdm
    return tqdm(total=total, unit="record", unit_scale=True, disable=not enabled, leave=False,
                desc="statistics")


def _examples_in(shard: str, manifest: dict) -> int | None:
    """The shard's example count from the manifest (or its sidecar), if recorded."""
    name = os.path.basename(shard)
    for entry in manifest.get("shards", []):
        if entry.get("file") == name:
            return entry["examples"]
    sidecar = sidecar_path(shard)
    if files.exists(sidecar):
        return json.loads(files.read_bytes(sidecar)).get("examples")
    return None


def _manifest_beside(shard: str) -> dict | None:
    """The manifest (or build plan) in the shard's folder, local or remote, if there is one."""
    folder = os.path.dirname(shard if files.is_remote(shard) else os.path.abspath(shard))
    for name in ("manifest.json", "build.json"):
        path = os.path.join(folder, name)
        if files.exists(path):
            return json.loads(files.read_bytes(path))
    return None
