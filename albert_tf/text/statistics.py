"""What a build saw and made: input problems and example statistics, mergeable across shards.

Each shard's statistics go into its sidecar file and, summed, into the manifest; `inspect`
recomputes the example statistics from a shard's records.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Union

from albert_tf.text.options import SENTENCE_LABELS

MESSAGES_PER_KIND = 5  # per shard
MERGED_MESSAGES = 50


@dataclasses.dataclass
class InputReport:
    """Counts of input problems by kind, and the first few messages of each kind."""

    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    messages: list[str] = dataclasses.field(default_factory=list)

    def note(self, kind: str, message: Union[str, Callable[[], str]]) -> None:
        """Counts one `kind` problem; keeps its message (a callable is only called if kept)."""
        seen = self.counts.get(kind, 0)
        self.counts[kind] = seen + 1
        if seen < MESSAGES_PER_KIND:
            self.messages.append(message() if callable(message) else message)

    def merge(self, other: "InputReport") -> None:
        """Adds `other`'s counts; keeps messages up to MERGED_MESSAGES (a manifest of
        thousands of shards must not carry five messages of each)."""
        for kind, count in other.counts.items():
            self.counts[kind] = self.counts.get(kind, 0) + count
        self.messages.extend(other.messages[:max(0, MERGED_MESSAGES - len(self.messages))])


@dataclasses.dataclass
class ExampleStatistics:
    """Counts over written examples; `summary()` turns them into the rates people check."""

    documents: int = 0
    sentences: int = 0
    examples: int = 0
    full_length_examples: int = 0
    short_target_examples: int = 0
    tokens: int = 0  # non-padding tokens, [CLS]/[SEP] included
    masked_tokens: int = 0
    replaced_by_mask: int = 0
    kept_original: int = 0
    replaced_by_random: int = 0
    single_sentence_chunks_split: int = 0
    single_sentence_chunks_random_next: int = 0
    chunks_skipped: int = 0
    nsp_without_other_document: int = 0
    label_counts: dict[int, int] = dataclasses.field(default_factory=dict)
    # Masked spans by length in words (index = length, [0] unused); "unconstrained" counts
    # the spans placed while the prediction budget could hold any span, whose lengths are
    # the drawn n ~ p(n).
    span_lengths: list[int] = dataclasses.field(default_factory=list)
    unconstrained_span_lengths: list[int] = dataclasses.field(default_factory=list)

    def span_counters(self, ngram: int) -> tuple[list[int], list[int]]:
        """The two span-length lists, long enough for spans of up to `ngram` words."""
        for counts in (self.span_lengths, self.unconstrained_span_lengths):
            counts.extend([0] * (ngram + 1 - len(counts)))
        return self.span_lengths, self.unconstrained_span_lengths

    def count_label(self, label: int, times: int = 1) -> None:
        self.label_counts[label] = self.label_counts.get(label, 0) + times

    def merge(self, other: "ExampleStatistics") -> None:
        for field in dataclasses.fields(self):
            mine, theirs = getattr(self, field.name), getattr(other, field.name)
            if isinstance(mine, dict):
                for key, count in theirs.items():
                    mine[key] = mine.get(key, 0) + count
            elif isinstance(mine, list):
                mine.extend([0] * (len(theirs) - len(mine)))
                for index, count in enumerate(theirs):
                    mine[index] += count
            else:
                setattr(self, field.name, mine + theirs)

    def summary(self) -> dict[str, float]:
        """Rates: masked share of tokens, replacement shares, label shares, length shares."""
        def share(count, total):
            return round(count / total, 6) if total else 0.0
        masked = self.masked_tokens
        spans = sum(self.span_lengths)
        return {
            "masked_fraction_of_tokens": share(masked, self.tokens),
            "mask_token_share": share(self.replaced_by_mask, masked),
            "kept_share": share(self.kept_original, masked),
            "random_token_share": share(self.replaced_by_random, masked),
            "label_1_share": share(self.label_counts.get(1, 0), self.examples),
            "full_length_share": share(self.full_length_examples, self.examples),
            "short_target_share": share(self.short_target_examples, self.examples),
            "mean_span_words": share(sum(n * c for n, c in enumerate(self.span_lengths)), spans),
            "mean_tokens_per_example": share(self.tokens, self.examples),
        }


@dataclasses.dataclass
class ShardStatistics:
    """Everything one shard build reports: its example counts and its input problems."""

    examples: ExampleStatistics = dataclasses.field(default_factory=ExampleStatistics)
    inputs: InputReport = dataclasses.field(default_factory=InputReport)

    def merge(self, other: "ShardStatistics") -> None:
        self.examples.merge(other.examples)
        self.inputs.merge(other.inputs)

    def to_dict(self) -> dict:
        return {"examples": dataclasses.asdict(self.examples),
                "summary": self.examples.summary(),
                "input_problems": dict(sorted(self.inputs.counts.items())),
                "input_messages": list(self.inputs.messages)}

    @classmethod
    def from_dict(cls, mapping: dict) -> "ShardStatistics":
        examples = {name: ({int(key): count for key, count in value.items()}
                           if isinstance(value, dict) else value)
                     for name, value in mapping["examples"].items()}  # JSON keys are strings
        return cls(ExampleStatistics(**examples),
                   InputReport(dict(mapping["input_problems"]), list(mapping["input_messages"])))


def format_summary(summary: dict[str, float], sentence_objective: str | None = None) -> str:
    """A summary (`ExampleStatistics.summary()`, optionally with "examples") as a readable
    two-column table; rates a summary lacks (records alone cannot tell them) are left out.

    >>> print(format_summary({"examples": 1200, "masked_fraction_of_tokens": 0.15,
    ...                       "mask_token_share": 0.8, "label_1_share": 0.5}, "sop"))
    examples                       1,200
    masked                         15.0% of tokens
      shown as [MASK]              80.0%
    sentence label 1               50.0%  (0 = A before B as written, 1 = swapped)
    """
    def percent(name):
        return f"{100 * summary[name]:.1f}%"

    rows = []
    if "examples" in summary:
        rows.append(("examples", f"{summary['examples']:,}"))
    if "mean_tokens_per_example" in summary:
        notes = [f"{percent(name)} {text}" for name, text in
                 (("full_length_share", "full length"), ("short_target_share", "aimed short"))
                 if name in summary]
        rows.append(("tokens per example", f"{summary['mean_tokens_per_example']:.1f}"
                     + (f"  ({', '.join(notes)})" if notes else "")))
    if "masked_fraction_of_tokens" in summary:
        spans = (f", in spans of {summary['mean_span_words']:.2f} words on average"
                 if "mean_span_words" in summary else "")
        rows.append(("masked", f"{percent('masked_fraction_of_tokens')} of tokens{spans}"))
    rows.extend((f"  {label}", percent(name)) for name, label in (
        ("mask_token_share", "shown as [MASK]"), ("kept_share", "kept as they were"),
        ("random_token_share", "replaced by a random piece")) if name in summary)
    if "label_1_share" in summary:
        meaning = SENTENCE_LABELS.get(sentence_objective or "")
        rows.append(("sentence label 1",
                     percent("label_1_share") + (f"  ({meaning})" if meaning else "")))
    return "\n".join(f"{name:<30} {value}" for name, value in rows)
